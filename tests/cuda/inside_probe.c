/* A probe outside callguard: counts the threads inside the driver's cuModuleLoadData at once, to show from
 * below the layer whether it serialized the calls. Set its path as CALLGUARD_CUDA_LIBRARY: the layer then
 * takes every real function from this library's handle, and dlsym on a handle also searches its
 * dependencies, so everything but cuModuleLoadData comes from the libcuda.so.1 this library depends on (the
 * real driver through LD_LIBRARY_PATH, or the stand-in here). Reports like the stand-in does:
 * cgcuda_standin_max_inside() is the most threads seen inside at once. */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int inside, most;

__attribute__((visibility("default"))) int cgcuda_standin_max_inside(void) { return atomic_load(&most); }

__attribute__((visibility("default"))) CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    static _Atomic(void *) real;
    void *fn = atomic_load(&real);
    if (!fn) {
        fn = dlsym(RTLD_NEXT, "cuModuleLoadData");
        if (!fn) {
            fprintf(stderr, "cuda inside probe: no cuModuleLoadData after this library\n");
            return CUDA_ERROR_NOT_INITIALIZED;
        }
        atomic_store(&real, fn);
    }
    int n = atomic_fetch_add(&inside, 1) + 1;
    for (int m = atomic_load(&most); n > m && !atomic_compare_exchange_weak(&most, &m, n);) {}
    CUresult r = ((CUresult(*)(CUmodule *, const void *))fn)(module, image);
    atomic_fetch_sub(&inside, 1);
    return r;
}
