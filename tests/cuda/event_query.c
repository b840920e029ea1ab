/* Polls a kernel's completion the way CUDA programs do: cuEventQuery and
 * cuStreamQuery until the work is done (each CUDA_ERROR_NOT_READY reports a
 * state, not a failure), then one real failure: cuEventQuery on a NULL event
 * (CUDA_ERROR_INVALID_HANDLE). Prints how many NOT_READY each returned. The
 * kernel takes CGCUDA_KERNEL_MS (the stand-in's). */
#include <cuda.h>

#include <stdio.h>
#include <stdlib.h>

#define CU_OK(call)                                                                                                    \
    do {                                                                                                               \
        CUresult r_ = (call);                                                                                          \
        if (r_ != CUDA_SUCCESS) {                                                                                      \
            fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, (int)r_);                            \
            exit(3);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* Calls q(arg) until it stops saying NOT_READY; returns how often it did. */
static long poll_until_done(CUresult (*q)(void *), void *arg)
{
    long n = 0;
    CUresult r;
    while ((r = q(arg)) == CUDA_ERROR_NOT_READY)
        n++;
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "query returned %d\n", (int)r);
        exit(4);
    }
    return n;
}

static CUresult event_query(void *e) { return cuEventQuery((CUevent)e); }
static CUresult stream_query(void *s) { return cuStreamQuery((CUstream)s); }

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUevent ev;
    CU_OK(cuInit(0));
    CU_OK(cuDeviceGet(&dev, 0));
    CU_OK(cuCtxCreate_v2(&ctx, 0, dev));
    CU_OK(cuModuleLoadData(&mod, ".version 8.0\n.visible .entry spin()\n{ ret; }\n"));
    CU_OK(cuModuleGetFunction(&f, mod, "spin"));
    CU_OK(cuEventCreate(&ev, 0));
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CU_OK(cuEventRecord(ev, NULL));
    long events = poll_until_done(event_query, ev);
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    long streams = poll_until_done(stream_query, NULL);
    CUresult bad = cuEventQuery(NULL);
    printf("event_not_ready=%ld stream_not_ready=%ld null_event=%d\n", events, streams, (int)bad);
    CU_OK(cuEventDestroy_v2(ev));
    CU_OK(cuModuleUnload(mod));
    CU_OK(cuCtxDestroy_v2(ctx));
    return events > 0 && streams > 0 ? 0 : 5;
}
