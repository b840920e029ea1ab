/* 16 threads each load a distinct module with cuModuleLoadData at once (started on a barrier), the way a
 * JIT that compiles kernels on a thread pool does. Prints "loaded N modules, at most M threads inside".
 *
 *   compile_race [STANDIN]   STANDIN: the stand-in's path, to ask it how many threads were inside at once
 *                            (it may be loaded privately, by a layer linked in its place).
 * Built linked to the stand-in (run plain, or with a layer preloaded) and linked to the layer. */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>
#include "../race_threads.h"
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 16

static CUcontext ctx;
static int loaded[NTHREADS];

static void *worker(void *arg)
{
    int i = (int)(long)arg;
    char ptx[256];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry kernel_%d()\n{\n ret;\n}\n", i);
    if (cuCtxSetCurrent(ctx) != CUDA_SUCCESS) return NULL;
    pthread_barrier_wait(&cg_race_start);
    CUmodule mod;
    CUresult r = cuModuleLoadData(&mod, ptx);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "thread %d: cuModuleLoadData: %d\n", i, (int)r);
        return NULL;
    }
    char name[32];
    snprintf(name, sizeof name, "kernel_%d", i);
    CUfunction f;
    loaded[i] = cuModuleGetFunction(&f, mod, name) == CUDA_SUCCESS && cuModuleUnload(mod) == CUDA_SUCCESS;
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
    int n = cg_race_run(NTHREADS, worker, loaded);
    int inside = -1;
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD) : RTLD_DEFAULT;
    int (*max_inside)(void) = h ? (int (*)(void))dlsym(h, "cgcuda_standin_max_inside") : NULL;
    if (max_inside) inside = max_inside();
    printf("loaded %d modules, at most %d threads inside\n", n, inside);
    cuCtxDestroy_v2(ctx);
    return n == NTHREADS ? 0 : 1;
}
