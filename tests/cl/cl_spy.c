/* The test's own interposer, placed below the layer (after it in LD_PRELOAD):
 * it sees the calls the layer lets through to "the real" clBuildProgram, counts
 * how many threads are inside at once, and forwards to ocl-icd's. It sleeps
 * in its window so that overlap shows even where PoCL serializes its own
 * compiles: what it measures is callguard's lock, not PoCL's. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <time.h>

static atomic_int inside, max_inside, calls;

__attribute__((visibility("default"))) int cgspy_max_inside(void) { return atomic_load(&max_inside); }
__attribute__((visibility("default"))) int cgspy_calls(void) { return atomic_load(&calls); }

__attribute__((visibility("default"))) cl_int clBuildProgram(cl_program program, cl_uint num_devices,
                                                             const cl_device_id *device_list, const char *options,
                                                             void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                                             void *user_data)
{
    static __typeof__(clBuildProgram) *_Atomic real;
    __typeof__(clBuildProgram) *fn = atomic_load(&real);
    if (!fn) {
        fn = (__typeof__(clBuildProgram) *)dlsym(RTLD_NEXT, "clBuildProgram");
        if (!fn) return CL_OUT_OF_RESOURCES;
        atomic_store(&real, fn);
    }
    atomic_fetch_add(&calls, 1);
    int now = atomic_fetch_add(&inside, 1) + 1;
    int m = atomic_load(&max_inside);
    while (now > m && !atomic_compare_exchange_weak(&max_inside, &m, now)) {}
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
    cl_int r = fn(program, num_devices, device_list, options, pfn_notify, user_data);
    atomic_fetch_sub(&inside, 1);
    return r;
}
