/* cg_cuda_hand.c: the CUDA layer's hand-written wrappers (wrapper = hand in apis/cuda.ini). cg_cuda.c
 * #includes this file at its end, so it sees the generated cgl_sites, cgl_layer and cgl_guarded_<name>
 * (include/callguard/layer.h, "Hand-written wrappers"). Not compiled on its own.
 *
 * cuGetProcAddress (CUDA 11.3, 4 arguments) and cuGetProcAddress_v2 (12.0, 5 arguments). The CUDA runtime
 * (so PyTorch and Triton) and cuda-python call the driver almost only through pointers this resolver
 * returns, never through the exported names a layer defines; the runtime first asks it for
 * "cuGetProcAddress" itself and uses the answer for every later lookup. So each wrapper makes the guarded
 * call of the real resolver, maps the address it returned to the driver's export at that address, and
 * returns the layer's wrapper of that export (cg_wrapper_by_address). The driver still chooses the variant
 * for the version and the per-thread-stream flag asked (the export says which it chose); the layer adds the
 * guard, and counts the calls under the header's name. Asked for "cuGetProcAddress", the driver answers
 * with one of its two resolvers, and so the layer with its own. A pointer that is no export the layer
 * guards (cuGetExportTable, which apis/cuda.ini forwards untouched; a name cuda.h lacks; an address inside
 * the driver) is returned as the driver gave it; a NULL answer (an unknown or empty name, a version older
 * than the entry point) and every result code pass through unchanged.
 *
 * cuInit makes its guarded call and, once it succeeded, asks the runtime to read the driver's identity
 * for the quirks file (cg_layer_identify, docs/quirks.md): once per process, only when the quirks file
 * has a CUDA quirk; every later call costs one atomic load more. A program that reaches cuInit through
 * cuGetProcAddress gets the same wrapper. What CUDA says of its driver: cuDriverGetVersion, the CUDA
 * version the driver supports (1000 * major + 10 * minor: 13020), written "13.2"; the first device's
 * name (cuDeviceGetName) and NVIDIA's PCI vendor id, 0x10de, when there is a device. The driver's own
 * release (595.84) is no answer of the API: a quirk names it as the version of libcuda.so.1's file
 * (libcuda.so.595.84), its `library` condition. */

#include <stdio.h>
#include <string.h>

/* No real library: the guarded call returned the missing result without asking anyone; leave no stale
 * pointer behind for the caller to call. */
static void cgl_cuda_no_function(unsigned site, void **pfn)
{
    if (pfn && !atomic_load_explicit(&cgl_sites[site].real, memory_order_relaxed)) *pfn = NULL;
}

CG_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                               CUdriverProcAddressQueryResult *symbolStatus)
{
    CUresult r = cgl_guarded_cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus);
    if (r == CUDA_SUCCESS && pfn)
        *pfn = cg_wrapper_by_address(&cgl_layer, *pfn);
    else
        cgl_cuda_no_function(CGL_cuGetProcAddress_v2, pfn);
    return r;
}

CG_EXPORT CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    CUresult r = cgl_guarded_cuGetProcAddress(symbol, pfn, cudaVersion, flags);
    if (r == CUDA_SUCCESS && pfn)
        *pfn = cg_wrapper_by_address(&cgl_layer, *pfn);
    else
        cgl_cuda_no_function(CGL_cuGetProcAddress, pfn);
    return r;
}

static unsigned cgl_cuda_probe(cg_layer *l, cg_identity *ids, unsigned max)
{
    CUresult (*version)(int *) = cg_real_function(l, "cuDriverGetVersion");
    CUresult (*count)(int *) = cg_real_function(l, "cuDeviceGetCount");
    CUresult (*device)(CUdevice *, int) = cg_real_function(l, "cuDeviceGet");
    CUresult (*name)(char *, int, CUdevice) = cg_real_function(l, "cuDeviceGetName");
    int v = 0, n = 0;
    if (!max || !version || version(&v) != CUDA_SUCCESS || v <= 0) return 0;
    cg_identity *id = &ids[0];
    memset(id, 0, sizeof *id);
    snprintf(id->version, sizeof id->version, "%d.%d", v / 1000, v % 1000 / 10);
    CUdevice dev = 0;
    if (count && count(&n) == CUDA_SUCCESS && n > 0) {
        id->vendor = 0x10de;
        if (!name || !device || device(&dev, 0) != CUDA_SUCCESS ||
            name(id->name, (int)sizeof id->name - 1, dev) != CUDA_SUCCESS)
            id->name[0] = '\0';
    }
    return 1;
}

CG_EXPORT CUresult CUDAAPI cuInit(unsigned int Flags)
{
    CUresult r = cgl_guarded_cuInit(Flags);
    if (r == CUDA_SUCCESS) cg_layer_identify(&cgl_layer, cgl_cuda_probe);
    return r;
}
