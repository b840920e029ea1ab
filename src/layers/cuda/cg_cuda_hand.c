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
 * than the entry point) and every result code pass through unchanged. */

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
