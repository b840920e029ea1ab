/* The test's own interposer for the two entry points that reach Intel's
 * compiler (zeModuleCreate, clBuildProgram). It sits below callguard's
 * layers, between them and the real libraries, so it sees the calls the
 * layers let through, and counts how many threads are inside either at once
 * and how often one API's compile started while the other's was running.
 * It sleeps in its window so that an overlap shows even where PoCL
 * serializes its own compiles: what it measures is callguard's lock.
 *
 * It forwards to the real libraries by absolute path, not RTLD_NEXT: under
 * `callguard run` the program's libze_loader.so.1 and libOpenCL.so.1 are
 * callguard's soname shims, and a shim that looks for the real function
 * among the loaded objects would find this probe again. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <stdatomic.h>
#include <time.h>

#define PROBE_EXPORT __attribute__((visibility("default")))

static atomic_int inside_ze, inside_cl, max_inside, cross, calls_ze, calls_cl;

PROBE_EXPORT void cg_probe_counts(int *ze, int *cl, int *max, int *crossed)
{
    *ze = atomic_load(&calls_ze);
    *cl = atomic_load(&calls_cl);
    *max = atomic_load(&max_inside);
    *crossed = atomic_load(&cross);
}

static void enter(atomic_int *mine, atomic_int *other, atomic_int *calls)
{
    atomic_fetch_add(calls, 1);
    atomic_fetch_add(mine, 1);
    if (atomic_load(other) > 0) atomic_fetch_add(&cross, 1);
    int now = atomic_load(&inside_ze) + atomic_load(&inside_cl);
    int m = atomic_load(&max_inside);
    while (now > m && !atomic_compare_exchange_weak(&max_inside, &m, now)) {}
    struct timespec ts = {0, 10 * 1000000L};
    nanosleep(&ts, NULL);
}

static void *open_real(const char *path, const char *name)
{
    void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    void *p = h ? dlsym(h, name) : NULL;
    if (!p) abort();
    return p;
}

PROBE_EXPORT ze_result_t zeModuleCreate(ze_context_handle_t context, ze_device_handle_t device,
                                        const ze_module_desc_t *desc, ze_module_handle_t *module,
                                        ze_module_build_log_handle_t *log)
{
    static __typeof__(zeModuleCreate) *_Atomic real;
    if (!atomic_load(&real))
        atomic_store(&real, (__typeof__(zeModuleCreate) *)open_real(CG_PROBE_ZE_PATH, "zeModuleCreate"));
    enter(&inside_ze, &inside_cl, &calls_ze);
    ze_result_t r = atomic_load(&real)(context, device, desc, module, log);
    atomic_fetch_sub(&inside_ze, 1);
    return r;
}

PROBE_EXPORT cl_int clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id *device_list,
                                   const char *options, void(CL_CALLBACK *pfn_notify)(cl_program, void *),
                                   void *user_data)
{
    static __typeof__(clBuildProgram) *_Atomic real;
    if (!atomic_load(&real))
        atomic_store(&real, (__typeof__(clBuildProgram) *)open_real(CG_PROBE_CL_PATH, "clBuildProgram"));
    enter(&inside_cl, &inside_ze, &calls_cl);
    cl_int r = atomic_load(&real)(program, num_devices, device_list, options, pfn_notify, user_data);
    atomic_fetch_sub(&inside_cl, 1);
    return r;
}
