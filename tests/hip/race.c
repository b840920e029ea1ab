/* 16 threads each load a module with hipModuleLoadData at once (started on a barrier), the way a JIT
 * that compiles kernels on a thread pool does (Triton's launcher under vLLM). Linked to the stand-in
 * libamdhip64.so.7 (standin.c). Prints "loaded N modules". */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include "../race_threads.h"
#include <stdio.h>

#define NTHREADS 16

static int loaded[NTHREADS];

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    char image[64];
    snprintf(image, sizeof image, "code object %d", i);
    pthread_barrier_wait(&cg_race_start);
    hipModule_t m;
    hipError_t r = hipModuleLoadData(&m, image);
    if (r != hipSuccess) fprintf(stderr, "thread %d: hipModuleLoadData: %d\n", i, (int)r);
    loaded[i] = r == hipSuccess && hipModuleUnload(m) == hipSuccess;
    return NULL;
}

int main(void)
{
    if (hipInit(0) != hipSuccess || hipSetDevice(0) != hipSuccess) {
        fprintf(stderr, "set-up failed\n");
        return 1;
    }
    int n = cg_race_run(NTHREADS, worker, loaded);
    printf("loaded %d modules\n", n);
    return n == NTHREADS ? 0 : 1;
}
