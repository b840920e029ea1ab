/* NVIDIA/cuda-tile#23's loop on 4 threads of one context: load a module, get its function, launch it,
 * synchronize, unload it (the report's reproducer, 25 times a thread, started on a barrier). On driver
 * 595.84 it segfaults in libcuda below cuLaunchKernel while another thread unloads; the stand-in does the
 * same with CGCUDA_UNLOAD_RACE=abort. Prints "loops N, at most M launches inside".
 *
 *   unload_race [STANDIN]   STANDIN: the stand-in's path, to ask it how many launches were inside at once.
 * Built linked to the stand-in (run plain, or under callguard run). */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>
#include "../race_threads.h"
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 4
#define LOOPS 25

static CUcontext ctx;
static int loops[NTHREADS];

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    char ptx[256];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry repro_%d()\n{\n ret;\n}\n", i);
    char name[32];
    snprintf(name, sizeof name, "repro_%d", i);
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS) return NULL;
    pthread_barrier_wait(&cg_race_start);
    int done = 0;
    for (int n = 0; n < LOOPS; n++) {
        CUmodule m;
        CUfunction f;
        if (cuModuleLoadData(&m, ptx) != CUDA_SUCCESS || cuModuleGetFunction(&f, m, name) != CUDA_SUCCESS ||
            cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS ||
            cuCtxSynchronize() != CUDA_SUCCESS || cuModuleUnload(m) != CUDA_SUCCESS) {
            fprintf(stderr, "thread %d: loop %d failed\n", i, n);
            return NULL;
        }
        done++;
    }
    loops[i] = done == LOOPS;
    return NULL;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUresult r = cuInit(0);
    if (r == CUDA_SUCCESS) r = cuDeviceGet(&dev, 0);
    if (r == CUDA_SUCCESS) r = cuCtxCreate_v2(&ctx, 0, dev);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "set-up failed: %d\n", (int)r);
        return 1;
    }
    int n = cg_race_run(NTHREADS, worker, loops);
    int most = -1;
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) : RTLD_DEFAULT;
    int (*max_launches)(void) = h ? (int (*)(void))dlsym(h, "cgcuda_standin_max_launches") : NULL;
    if (max_launches) most = max_launches();
    printf("loops %d, at most %d launches inside\n", n * LOOPS, most);
    cuCtxDestroy_v2(ctx);
    return n == NTHREADS ? 0 : 1;
}
