/* A stand-in for tests, not AMD's runtime: a tiny libamdhip64.so.7 for machines without an AMD GPU.
 *
 * It implements a few HIP entry points with hip_runtime_api.h's own prototypes (Debian's 5.2.3 header):
 *   - hipInit, hipDriverGetVersion (70251234 unless CGHIP_DRIVER_VERSION says otherwise), one device
 *     (hipGetDeviceCount, hipSetDevice, hipDeviceGetName);
 *   - hipModuleLoadData, which "loads" for CGHIP_COMPILE_MS and, with CGHIP_COMPILER_RACE=abort, aborts
 *     when two threads are inside it at once (the window is the sleep, so the race shows on 2 cores); it
 *     walks the loaded objects with dl_iterate_phdr first, taking glibc's loader lock as a code object
 *     loader does (triton-lang/triton PR #11265's deadlock); hipModuleUnload, hipModuleGetFunction;
 *   - hipModuleLaunchKernel, which keeps the (one) stream busy for CGHIP_KERNEL_MS, and
 *     hipStreamSynchronize / hipDeviceSynchronize, which sleep until that work is done.
 *   - a first-call race: hipInit and hipGetDeviceCount set the runtime up at their first call, taking
 *     CGHIP_INIT_MS; with CGHIP_INIT_RACE=segv a second thread inside that set-up at once dies of
 *     SIGSEGV, as ROCm's first HIP calls from many threads did (rocprofiler-register's setenv racing
 *     HIP's getenv: ROCm/rocm-systems #10196); a call after the set-up never races.
 *   - with CGHIP_POOL_DEADLOCK=on, ROCm/rocm-systems #10529 (ROCm 7.14): hipMallocAsync and hipFreeAsync
 *     take the pool's lock, then the device's; hipEventSynchronize takes the device's, then the pool's (to
 *     release freed memory), each holding the first 2 ms: one of each on two threads deadlock for ever.
 *     Without it they take neither.
 *   - with CGHIP_EXEC_LOCK=on, ROCm/rocm-systems #11678 (therock-10.0): hipStreamSynchronize waits on the
 *     CPU holding the device's execution lock until the host makes progress (cghip_standin_host_progress(),
 *     as a spin kernel waits for a host flag); hipStreamWaitEvent and hipMemcpy take that lock first, so
 *     a thread that must make that progress after one of them deadlocks behind the synchronize.
 * cghip_standin_max_inside() tells tests the most threads seen inside hipModuleLoadData at once.
 *
 * Environment (a CGHIP_* name it does not know stops the process with status 2): CGHIP_COMPILE_MS (0),
 * CGHIP_KERNEL_MS (0), CGHIP_COMPILER_RACE (off|abort), CGHIP_DRIVER_VERSION (70251234),
 * CGHIP_INIT_MS (0), CGHIP_INIT_RACE (off|segv), CGHIP_POOL_DEADLOCK (off|on), CGHIP_EXEC_LOCK (off|on). */
#define _GNU_SOURCE
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>

#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

extern char **environ;
static long compile_ms, kernel_ms, driver_version = 70251234, init_ms;
static int race_abort, init_race, pool_deadlock, exec_lock;
static atomic_int init_inside, initialized;
static atomic_int inside, max_inside;
static _Atomic int64_t busy_until_ns;
static int modules; /* what a hipModule_t points at */

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
    if (ns <= 0) return;
    struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (nanosleep(&t, &t) != 0) {}
}

static long number(const char *name, const char *v)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < 0) {
        fprintf(stderr, "cghip stand-in: %s=%s: expected a number >= 0\n", name, v);
        exit(2);
    }
    return n;
}

__attribute__((constructor)) static void settings(void)
{
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "CGHIP_", 6) != 0) continue;
        const char *eq = strchr(*e, '=');
        const char *v = eq ? eq + 1 : "";
        size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
        if (n == 16 && strncmp(*e, "CGHIP_COMPILE_MS", n) == 0)
            compile_ms = number("CGHIP_COMPILE_MS", v);
        else if (n == 15 && strncmp(*e, "CGHIP_KERNEL_MS", n) == 0)
            kernel_ms = number("CGHIP_KERNEL_MS", v);
        else if (n == 20 && strncmp(*e, "CGHIP_DRIVER_VERSION", n) == 0)
            driver_version = number("CGHIP_DRIVER_VERSION", v);
        else if (n == 19 && strncmp(*e, "CGHIP_COMPILER_RACE", n) == 0 && (!strcmp(v, "off") || !strcmp(v, "abort")))
            race_abort = strcmp(v, "abort") == 0;
        else if (n == 13 && strncmp(*e, "CGHIP_INIT_MS", n) == 0)
            init_ms = number("CGHIP_INIT_MS", v);
        else if (n == 15 && strncmp(*e, "CGHIP_INIT_RACE", n) == 0 && (!strcmp(v, "off") || !strcmp(v, "segv")))
            init_race = strcmp(v, "segv") == 0;
        else if (n == 19 && strncmp(*e, "CGHIP_POOL_DEADLOCK", n) == 0 && (!strcmp(v, "off") || !strcmp(v, "on")))
            pool_deadlock = strcmp(v, "on") == 0;
        else if (n == 15 && strncmp(*e, "CGHIP_EXEC_LOCK", n) == 0 && (!strcmp(v, "off") || !strcmp(v, "on")))
            exec_lock = strcmp(v, "on") == 0;
        else {
            fprintf(stderr,
                    "cghip stand-in: unknown setting %s (known: CGHIP_COMPILE_MS, CGHIP_KERNEL_MS, "
                    "CGHIP_COMPILER_RACE=off|abort, CGHIP_DRIVER_VERSION, CGHIP_INIT_MS, "
                    "CGHIP_INIT_RACE=off|segv, CGHIP_POOL_DEADLOCK=off|on, CGHIP_EXEC_LOCK=off|on)\n",
                    *e);
            exit(2);
        }
    }
}

EXPORT int cghip_standin_max_inside(void) { return atomic_load(&max_inside); }

/* The runtime's set-up, made by the first calls: two threads in it at once
 * corrupt the environment one reads while the other writes it. */
static void first_call_setup(void)
{
    if (atomic_load(&initialized)) return;
    int in = atomic_fetch_add(&init_inside, 1) + 1;
    sleep_ns(init_ms * 1000000);
    if (init_race && (in > 1 || atomic_load(&init_inside) > 1)) {
        fprintf(stderr, "cghip stand-in: %d threads in the runtime's first-call set-up at once: SIGSEGV\n",
                atomic_load(&init_inside));
        raise(SIGSEGV);
    }
    atomic_store(&initialized, 1);
    atomic_fetch_sub(&init_inside, 1);
}

EXPORT hipError_t hipInit(unsigned int flags)
{
    if (flags) return hipErrorInvalidValue;
    first_call_setup();
    return hipSuccess;
}

EXPORT hipError_t hipDriverGetVersion(int *v)
{
    if (!v) return hipErrorInvalidValue;
    *v = (int)driver_version;
    return hipSuccess;
}

EXPORT hipError_t hipGetDeviceCount(int *n)
{
    if (!n) return hipErrorInvalidValue;
    first_call_setup();
    *n = 1;
    return hipSuccess;
}

EXPORT hipError_t hipSetDevice(int d) { return d == 0 ? hipSuccess : hipErrorInvalidDevice; }

EXPORT hipError_t hipDeviceGetName(char *name, int len, hipDevice_t d)
{
    if (!name || len <= 0 || d != 0) return hipErrorInvalidValue;
    snprintf(name, (size_t)len, "callguard stand-in (not an AMD GPU)");
    return hipSuccess;
}

/* The walk a code object loader makes (the loader lock held throughout). */
static int walk(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)info, (void)size, (void)arg;
    return 0;
}

EXPORT hipError_t hipModuleLoadData(hipModule_t *module, const void *image)
{
    if (!module || !image) return hipErrorInvalidValue;
    dl_iterate_phdr(walk, NULL);
    int in = atomic_fetch_add(&inside, 1) + 1;
    for (int m = atomic_load(&max_inside); in > m && !atomic_compare_exchange_weak(&max_inside, &m, in);) {}
    if (in > 1 && race_abort) {
        fprintf(stderr, "cghip stand-in: %d threads inside hipModuleLoadData at once: aborting\n", in);
        abort();
    }
    sleep_ns(compile_ms * 1000000);
    if (race_abort && atomic_load(&inside) > 1) {
        fprintf(stderr, "cghip stand-in: another thread entered hipModuleLoadData: aborting\n");
        abort();
    }
    atomic_fetch_sub(&inside, 1);
    *module = (hipModule_t)&modules;
    return hipSuccess;
}

EXPORT hipError_t hipModuleUnload(hipModule_t module) { return module ? hipSuccess : hipErrorInvalidValue; }

EXPORT hipError_t hipModuleGetFunction(hipFunction_t *f, hipModule_t module, const char *name)
{
    if (!f || !module || !name) return hipErrorInvalidValue;
    *f = (hipFunction_t)&modules;
    return hipSuccess;
}

EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                        hipStream_t stream, void **params, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)stream, (void)params, (void)extra;
    if (!f) return hipErrorInvalidResourceHandle;
    int64_t start = now_ns(), busy = atomic_load(&busy_until_ns);
    atomic_store(&busy_until_ns, (busy > start ? busy : start) + kernel_ms * 1000000);
    return hipSuccess;
}

/* CGHIP_EXEC_LOCK=on: the device's execution lock (rocm-systems #11678), and the host progress a
 * kernel of the stream waits for. */
static pthread_mutex_t exec_mutex = PTHREAD_MUTEX_INITIALIZER;
static atomic_int host_progress;

EXPORT void cghip_standin_host_progress(void) { atomic_store(&host_progress, 1); }

static void exec_enqueue(void)
{
    if (!exec_lock) return;
    pthread_mutex_lock(&exec_mutex);
    pthread_mutex_unlock(&exec_mutex);
}

EXPORT hipError_t hipStreamSynchronize(hipStream_t stream)
{
    (void)stream;
    if (exec_lock) {
        pthread_mutex_lock(&exec_mutex); /* a marker with cpu_wait, waited for under the lock */
        while (!atomic_load(&host_progress))
            sleep_ns(1000000);
        pthread_mutex_unlock(&exec_mutex);
    }
    sleep_ns(atomic_load(&busy_until_ns) - now_ns());
    return hipSuccess;
}

EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags)
{
    (void)stream, (void)event;
    if (flags) return hipErrorInvalidValue;
    exec_enqueue();
    return hipSuccess;
}

EXPORT hipError_t hipMemcpy(void *dst, const void *src, size_t size, hipMemcpyKind kind)
{
    (void)kind;
    if (size && (!dst || !src)) return hipErrorInvalidValue;
    exec_enqueue();
    memmove(dst, src, size);
    return hipSuccess;
}

EXPORT hipError_t hipDeviceSynchronize(void) { return hipStreamSynchronize(NULL); }

/* ---- the memory pool: rocm-systems #10529's two locks, taken in opposite orders ---- */

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER, device_lock = PTHREAD_MUTEX_INITIALIZER;

static void two_locks(pthread_mutex_t *first, pthread_mutex_t *second)
{
    if (!pool_deadlock) return;
    pthread_mutex_lock(first);
    sleep_ns(2000000);
    pthread_mutex_lock(second);
    pthread_mutex_unlock(second);
    pthread_mutex_unlock(first);
}

EXPORT hipError_t hipMallocAsync(void **ptr, size_t size, hipStream_t stream)
{
    (void)stream;
    if (!ptr) return hipErrorInvalidValue;
    two_locks(&pool_lock, &device_lock); /* the pool grows: it asks the device for memory */
    *ptr = malloc(size ? size : 1);
    return *ptr ? hipSuccess : hipErrorOutOfMemory;
}

EXPORT hipError_t hipFreeAsync(void *ptr, hipStream_t stream)
{
    (void)stream;
    two_locks(&pool_lock, &device_lock);
    free(ptr);
    return hipSuccess;
}

EXPORT hipError_t hipEventSynchronize(hipEvent_t event)
{
    (void)event;
    two_locks(&device_lock, &pool_lock); /* releases the pools' freed memory under the device's lock */
    return hipSuccess;
}
