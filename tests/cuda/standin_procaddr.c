/* The stand-in libcuda.so.1's cuGetProcAddress (standin.h): each export
 * with the CUDA version of its ABI, answered as the real driver answers. */
#define _GNU_SOURCE
#include "standin.h"

#include <stddef.h>
#include <string.h>

/* ---- cuGetProcAddress ---- */

/* Each export with the CUDA version that introduced its ABI and whether it is a per-thread-stream
 * form: cudaTypedefs.h's PFN_<name>_v<version>[_ptds|_ptsz]. */
#define E(base, version, pt, fn)                                                                                       \
    {                                                                                                                  \
        base, version, pt, (void *)fn                                                                                  \
    }
static const struct entry {
    const char *base;
    int version, per_thread;
    void *fn;
} entries[] = {
    E("cuInit", 2000, 0, cuInit),
    E("cuDriverGetVersion", 2020, 0, cuDriverGetVersion),
    E("cuDeviceGet", 2000, 0, cuDeviceGet),
    E("cuDeviceGetCount", 2000, 0, cuDeviceGetCount),
    E("cuDeviceGetName", 2000, 0, cuDeviceGetName),
    E("cuDeviceTotalMem", 2000, 0, cuDeviceTotalMem),
    E("cuDeviceTotalMem", 3020, 0, cuDeviceTotalMem_v2),
    E("cuCtxCreate", 2000, 0, cuCtxCreate),
    E("cuCtxCreate", 3020, 0, cuCtxCreate_v2),
    E("cuCtxCreate", 11040, 0, cuCtxCreate_v3),
    E("cuCtxCreate", 12050, 0, cuCtxCreate_v4),
    E("cuCtxDestroy", 2000, 0, cuCtxDestroy),
    E("cuCtxDestroy", 4000, 0, cuCtxDestroy_v2),
    E("cuCtxGetCurrent", 4000, 0, cuCtxGetCurrent),
    E("cuCtxSetCurrent", 4000, 0, cuCtxSetCurrent),
    E("cuCtxGetDevice", 2000, 0, cuCtxGetDevice),
    E("cuCtxSynchronize", 2000, 0, cuCtxSynchronize),
    E("cuDevicePrimaryCtxRetain", 7000, 0, cuDevicePrimaryCtxRetain),
    E("cuDevicePrimaryCtxRelease", 7000, 0, cuDevicePrimaryCtxRelease),
    E("cuDevicePrimaryCtxRelease", 11000, 0, cuDevicePrimaryCtxRelease_v2),
    E("cuModuleLoadData", 2000, 0, cuModuleLoadData),
    E("cuModuleGetFunction", 2000, 0, cuModuleGetFunction),
    E("cuModuleUnload", 2000, 0, cuModuleUnload),
    E("cuLaunchKernel", 4000, 0, cuLaunchKernel),
    E("cuLaunchKernel", 7000, 1, cuLaunchKernel_ptsz),
    E("cuStreamCreate", 2000, 0, cuStreamCreate),
    E("cuStreamDestroy", 2000, 0, cuStreamDestroy),
    E("cuStreamDestroy", 4000, 0, cuStreamDestroy_v2),
    E("cuStreamSynchronize", 2000, 0, cuStreamSynchronize),
    E("cuStreamSynchronize", 7000, 1, cuStreamSynchronize_ptsz),
    /* the stand-in has no 32-bit legacy memory calls: asked for version 2000 they are "not sufficient" */
    E("cuMemAlloc", 3020, 0, cuMemAlloc_v2),
    E("cuMemFree", 3020, 0, cuMemFree_v2),
    E("cuMemcpyHtoD", 3020, 0, cuMemcpyHtoD_v2),
    E("cuMemcpyHtoD", 7000, 1, cuMemcpyHtoD_v2_ptds),
    E("cuMemcpyDtoH", 3020, 0, cuMemcpyDtoH_v2),
    E("cuMemcpyDtoH", 7000, 1, cuMemcpyDtoH_v2_ptds),
    E("cuGetErrorString", 6000, 0, cuGetErrorString),
    E("cuGetErrorName", 6000, 0, cuGetErrorName),
    E("cuGetExportTable", 3000, 0, cuGetExportTable),
    E("cuGetProcAddress", 11030, 0, cuGetProcAddress),
    E("cuGetProcAddress", 12000, 0, cuGetProcAddress_v2),
};

/* The newest form not newer than `version`. With the per-thread flag, a name that has per-thread forms gets
 * the newest of them, and none when `version` is older than the first (7000): the real driver 580.159.04
 * answers cuStreamSynchronize at 6050 and cuMemcpyDtoH at 3020 with CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
 * (the 4-argument form: CUDA_ERROR_NOT_FOUND), not with the legacy-stream form (tests/gpu/check.sh on the
 * H200). A name without per-thread forms gets its legacy-stream one (cuda.h's cuGetProcAddress documentation). */
static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    if (version > cfg.driver_version) return CUDA_ERROR_INVALID_VALUE; /* "greater than the driver version" */
    int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    const struct entry *best = NULL, *best_pt = NULL;
    int known = 0, has_pt = 0;
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
        const struct entry *e = &entries[i];
        if (strcmp(e->base, symbol) != 0) continue;
        known = 1;
        has_pt |= e->per_thread;
        if (e->version > version) continue;
        const struct entry **slot = e->per_thread ? &best_pt : &best;
        if (!*slot || e->version > (*slot)->version) *slot = e;
    }
    if (per_thread && has_pt) best = best_pt;
    *pfn = best ? best->fn : NULL;
    if (status)
        *status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
                  : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}

/* CUDA 12.0's form: a name or version it cannot answer is CUDA_SUCCESS with a NULL pointer and a status. */
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *symbolStatus)
{
    COUNT();
    return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

/* CUDA 11.3's form: the same search; what it cannot answer is CUDA_ERROR_NOT_FOUND (11.x documentation). */
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    COUNT();
    CUdriverProcAddressQueryResult status;
    CUresult r = lookup(symbol, pfn, cudaVersion, flags, &status);
    if (r == CUDA_SUCCESS && status != CU_GET_PROC_ADDRESS_SUCCESS) return CUDA_ERROR_NOT_FOUND;
    return r;
}
