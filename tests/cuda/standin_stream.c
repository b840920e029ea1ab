/* The stand-in libcuda.so.1's streams and launches (each launch keeps its
 * stream busy for CGCUDA_KERNEL_MS), events, host memory standing in for the
 * device's, errors and the export table (standin.h). */
#define _GNU_SOURCE
#include "standin.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct CUstream_st legacy_stream;
static __thread struct CUstream_st per_thread_stream;

/* ---- streams and launches ---- */

/* NULL is the legacy default stream, or the thread's own one in the _ptsz forms. */
static struct CUstream_st *stream_of(CUstream s, int per_thread)
{
    if (s == CU_STREAM_PER_THREAD || (s == NULL && per_thread)) return &per_thread_stream;
    if (s == NULL || s == CU_STREAM_LEGACY) return &legacy_stream;
    return s;
}

/* ---- CGCUDA_UNLOAD_RACE=abort: cuda-tile#23 ---- */

atomic_int inside_launch, max_launches, inside_unload;

/* A module call (unload or load) while a launch is inside, or a launch while one of them is: abort, as
 * driver 595.84 segfaults below cuLaunchKernel. */
void unload_race_check(const char *who)
{
    if (atomic_load(&inside_launch) && atomic_load(&inside_unload)) {
        fprintf(stderr,
                "cgcuda: CGCUDA_UNLOAD_RACE=abort: %s while a launch and a module unload or load were inside; "
                "aborting like driver 595.84 (cuda-tile#23)\n",
                who);
        abort();
    }
}

static void launch_window(void)
{
    int in = atomic_fetch_add(&inside_launch, 1) + 1;
    for (int m = atomic_load(&max_launches); in > m && !atomic_compare_exchange_weak(&max_launches, &m, in);) {}
    unload_race_check("a launch");
    struct timespec ts = {0, 2000000L};
    nanosleep(&ts, NULL);
    unload_race_check("a launch");
    atomic_fetch_sub(&inside_launch, 1);
}

static CUresult launch(CUfunction f, CUstream s, int per_thread)
{
    NEED_INIT();
    if (cfg.unload_race_abort) launch_window();
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!f || !f->mod || f->mod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    struct CUstream_st *st = stream_of(s, per_thread);
    long long start = now_ns(), busy = atomic_load(&st->busy_until_ns);
    long long end = (busy > start ? busy : start) + (long long)cfg.kernel_ms * 1000000LL;
    atomic_store(&st->busy_until_ns, end);
    for (long long all = atomic_load(&all_busy_until_ns);
         end > all && !atomic_compare_exchange_weak(&all_busy_until_ns, &all, end);) {}
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                               unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    COUNT();
    (void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY, (void)blockDimZ;
    (void)sharedMemBytes, (void)kernelParams, (void)extra;
    return launch(f, hStream, 0);
}

EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                    unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    COUNT();
    (void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY, (void)blockDimZ;
    (void)sharedMemBytes, (void)kernelParams, (void)extra;
    return launch(f, hStream, 1);
}

EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    COUNT();
    NEED_INIT();
    (void)Flags;
    if (!phStream) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    *phStream = calloc(1, sizeof **phStream);
    return *phStream ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult stream_destroy(CUstream s)
{
    NEED_INIT();
    if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return CUDA_ERROR_INVALID_HANDLE;
    free(s);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy(CUstream hStream)
{
    COUNT();
    return stream_destroy(hStream);
}

EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
    COUNT();
    return stream_destroy(hStream);
}

static CUresult stream_sync(CUstream s, int per_thread)
{
    NEED_INIT();
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    sleep_until(atomic_load(&stream_of(s, per_thread)->busy_until_ns));
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
    COUNT();
    return stream_sync(hStream, 0);
}

EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    COUNT();
    return stream_sync(hStream, 1);
}

EXPORT CUresult cuStreamQuery(CUstream hStream)
{
    COUNT();
    NEED_INIT();
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    return now_ns() < atomic_load(&stream_of(hStream, 0)->busy_until_ns) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

/* ---- events: done when the work before their record is ---- */

struct CUevent_st {
    _Atomic long long done_ns; /* 0: never recorded */
};

EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    COUNT();
    NEED_INIT();
    (void)Flags;
    if (!phEvent) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    *phEvent = calloc(1, sizeof **phEvent);
    return *phEvent ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    COUNT();
    NEED_INIT();
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    long long busy = atomic_load(&stream_of(hStream, 0)->busy_until_ns), now = now_ns();
    atomic_store(&hEvent->done_ns, busy > now ? busy : now);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent hEvent)
{
    COUNT();
    NEED_INIT();
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    return now_ns() < atomic_load(&hEvent->done_ns) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
    COUNT();
    NEED_INIT();
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    sleep_until(atomic_load(&hEvent->done_ns));
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
    COUNT();
    NEED_INIT();
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    free(hEvent);
    return CUDA_SUCCESS;
}

/* ---- memory: host memory stands in for the device's ---- */

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    COUNT();
    NEED_INIT();
    if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    void *p = malloc(bytesize);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    COUNT();
    NEED_INIT();
    free((void *)(uintptr_t)dptr);
    return CUDA_SUCCESS;
}

static CUresult copy(void *dst, const void *src, size_t n)
{
    NEED_INIT();
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (n && (!dst || !src)) return CUDA_ERROR_INVALID_VALUE;
    sleep_until(atomic_load(&legacy_stream.busy_until_ns)); /* a synchronous copy waits for the default stream */
    if (n) memcpy(dst, src, n);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    COUNT();
    return copy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
}

EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    COUNT();
    return copy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    COUNT();
    return copy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
}

EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    COUNT();
    return copy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
}

/* ---- errors ---- */

static const struct {
    CUresult code;
    const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
};

EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    COUNT();
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == error) {
            *pStr = errors[i].text;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    COUNT();
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == error) {
            *pStr = errors[i].name;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

/* One private table, for tests that check the call reaches the driver untouched. Its id spells "cg stand-in tbl". */
static const CUuuid standin_table_id = {{'c', 'g', ' ', 's', 't', 'a', 'n', 'd', '-', 'i', 'n', ' ', 't', 'b', 'l', 0}};
static const void *const standin_table[] = {(const void *)(2 * sizeof(void *)), (const void *)&standin_table_id};

EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    COUNT();
    if (!ppExportTable || !pExportTableId) return CUDA_ERROR_INVALID_VALUE;
    if (memcmp(pExportTableId, &standin_table_id, sizeof standin_table_id) != 0) {
        *ppExportTable = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    *ppExportTable = standin_table;
    return CUDA_SUCCESS;
}
