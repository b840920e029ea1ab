/* NVIDIA/open-gpu-kernel-modules#1277's start-up: a thread per GPU creates its contexts at once (the
 * device's primary context, as the runtime API does, then one of its own), as a multi-GPU program or a
 * data loader's workers do (4 devices, started on a barrier). On 610.57.04's open kernel modules two
 * creations at once can wedge every thread behind the RM lock; the stand-in does so with
 * CGCUDA_DEVICES=4 CGCUDA_CTX_CREATE_HANG=on. Prints "contexts N"; a hang is ended by alarm() after
 * 5 s (SIGALRM). Built linked to the stand-in (run plain, or under callguard run). */
#include <cuda.h>

#include "../race_threads.h"
#include <stdio.h>
#include <unistd.h>

#define NTHREADS 4

static int ok[NTHREADS];

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    CUdevice dev;
    CUcontext primary, own;
    if (cuDeviceGet(&dev, i) != CUDA_SUCCESS) return NULL;
    pthread_barrier_wait(&cg_race_start);
    if (cuDevicePrimaryCtxRetain(&primary, dev) != CUDA_SUCCESS) return NULL;
    if (cuCtxCreate_v2(&own, 0, dev) != CUDA_SUCCESS) return NULL;
    ok[i] = cuCtxDestroy_v2(own) == CUDA_SUCCESS && cuDevicePrimaryCtxRelease_v2(dev) == CUDA_SUCCESS;
    return NULL;
}

int main(void)
{
    alarm(5);
    if (cuInit(0) != CUDA_SUCCESS) {
        fprintf(stderr, "cuInit failed\n");
        return 1;
    }
    int n = cg_race_run(NTHREADS, worker, ok);
    printf("contexts %d\n", 2 * n);
    return n == NTHREADS ? 0 : 1;
}
