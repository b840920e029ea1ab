/* The test's own interposer, placed below the layer (after it in LD_PRELOAD):
 * it sees the calls the layer lets through to "the real" clBuildProgram, counts
 * how many threads are inside at once, and forwards to ocl-icd's. It sleeps
 * in its window so that overlap shows even where PoCL serializes its own
 * compiles: what it measures is callguard's lock, not PoCL's. The same for
 * clGetDeviceInfo and clGetPlatformInfo (a shared and an exclusive entry
 * point of one domain, issue 53), with a shorter sleep: the most threads
 * inside clGetDeviceInfo at once, and how often a call of one found a call
 * of the other inside. And clEnqueueWriteBuffer, as clvk before PR #883: a
 * second thread entering it on a queue another thread is in aborts (the
 * race on the queue's batch); threads on two queues are fine. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void spy_sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

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
    spy_sleep_ms(20);
    cl_int r = fn(program, num_devices, device_list, options, pfn_notify, user_data);
    atomic_fetch_sub(&inside, 1);
    return r;
}

static atomic_int dev_inside, dev_max, plat_inside, together;

__attribute__((visibility("default"))) int cgspy_device_info_max_inside(void) { return atomic_load(&dev_max); }
__attribute__((visibility("default"))) int cgspy_info_together(void) { return atomic_load(&together); }

#define SPY_REAL(name)                                                                                                 \
    static __typeof__(name) *_Atomic real;                                                                             \
    __typeof__(name) *fn = atomic_load(&real);                                                                         \
    if (!fn) {                                                                                                         \
        fn = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);                                                              \
        if (!fn) return CL_OUT_OF_RESOURCES;                                                                           \
        atomic_store(&real, fn);                                                                                       \
    }

__attribute__((visibility("default"))) cl_int clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size,
                                                              void *value, size_t *size_ret)
{
    SPY_REAL(clGetDeviceInfo)
    int now = atomic_fetch_add(&dev_inside, 1) + 1;
    int m = atomic_load(&dev_max);
    while (now > m && !atomic_compare_exchange_weak(&dev_max, &m, now)) {}
    if (atomic_load(&plat_inside)) atomic_fetch_add(&together, 1);
    spy_sleep_ms(2);
    cl_int r = fn(device, param, size, value, size_ret);
    atomic_fetch_sub(&dev_inside, 1);
    return r;
}

__attribute__((visibility("default"))) cl_int clGetPlatformInfo(cl_platform_id platform, cl_platform_info param,
                                                                size_t size, void *value, size_t *size_ret)
{
    SPY_REAL(clGetPlatformInfo)
    atomic_fetch_add(&plat_inside, 1);
    if (atomic_load(&dev_inside)) atomic_fetch_add(&together, 1);
    spy_sleep_ms(2);
    cl_int r = fn(platform, param, size, value, size_ret);
    if (atomic_load(&dev_inside)) atomic_fetch_add(&together, 1);
    atomic_fetch_sub(&plat_inside, 1);
    return r;
}

/* ---- clvk #883's race: two threads enqueueing on one queue ---- */

static cl_command_queue _Atomic queue_in[2];
static atomic_int write_inside, write_max;

__attribute__((visibility("default"))) int cgspy_enqueue_max_inside(void) { return atomic_load(&write_max); }

__attribute__((visibility("default"))) cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                                                   size_t offset, size_t size, const void *ptr,
                                                                   cl_uint nwait, const cl_event *wait, cl_event *event)
{
    SPY_REAL(clEnqueueWriteBuffer)
    int now = atomic_fetch_add(&write_inside, 1) + 1;
    int m = atomic_load(&write_max);
    while (now > m && !atomic_compare_exchange_weak(&write_max, &m, now)) {}
    int slot = -1;
    for (int i = 0; i < 2 && slot < 0; i++) {
        cl_command_queue none = NULL;
        if (atomic_load(&queue_in[i]) == q) {
            fprintf(stderr, "cgspy: two threads in clEnqueueWriteBuffer on one queue: aborting as clvk before PR "
                            "#883 can\n");
            abort();
        }
        if (atomic_compare_exchange_strong(&queue_in[i], &none, q)) slot = i;
    }
    spy_sleep_ms(2);
    cl_int r = fn(q, buf, blocking, offset, size, ptr, nwait, wait, event);
    if (slot >= 0) atomic_store(&queue_in[slot], NULL);
    atomic_fetch_sub(&write_inside, 1);
    return r;
}
