/* A stand-in for tests, not NVIDIA's driver: a tiny libcuda.so.1 for CI machines without a GPU.
 *
 * It implements a few dozen driver entry points with cuda.h's own prototypes (compiled with
 * -D__CUDA_API_VERSION_INTERNAL, so every name below is the exported name, legacy or versioned):
 *   - cuInit, cuDriverGetVersion, devices (one by default), contexts (cuCtxCreate and its _v2.._v4
 *     forms, the primary context), errors;
 *   - cuModuleLoadData, which "compiles" for CGCUDA_COMPILE_MS and, with CGCUDA_COMPILER_RACE=abort,
 *     aborts when two threads are inside it at once (the window is the sleep, so the race shows on 2 cores);
 *   - with CGCUDA_UNLOAD_RACE=abort, NVIDIA/cuda-tile#23 (driver 595.84): a launch stays 2 ms in
 *     cuLaunchKernel and aborts when a cuModuleUnload or cuModuleLoadData (1 ms each) runs meanwhile
 *     (SIGSEGV in libcuda there); launches beside each other are fine;
 *   - with CGCUDA_CTX_CREATE_HANG=on, NVIDIA/open-gpu-kernel-modules#1277 (610.57.04): creating a
 *     context (cuCtxCreate*, cuDevicePrimaryCtxRetain) takes 2 ms, and two threads creating contexts at
 *     once never return: the one that sees the other takes a process-wide "RM lock" and loops for ever
 *     holding it (the kernel module's OOM clean-up loop), the other waits for that lock; a context
 *     created alone returns;
 *   - launches and streams: each launch keeps its stream busy for CGCUDA_KERNEL_MS, and
 *     cuStreamSynchronize / cuCtxSynchronize sleep until the work is done;
 *   - cuStreamQuery and events (cuEventCreate, cuEventRecord, cuEventQuery, cuEventSynchronize,
 *     cuEventDestroy_v2): CUDA_ERROR_NOT_READY while the stream's work recorded is not done;
 *   - memory (host memory standing in for device memory) and copies, in their _v2 and _v2_ptds forms;
 *   - cuGetProcAddress (4 arguments) and cuGetProcAddress_v2 (5), answering as the real driver does:
 *     the variant returned depends on the CUDA version and the per-thread flag (the versions are
 *     cudaTypedefs.h's PFN_<name>_v<version> ones).
 *   - for cg_load_binary (Triton's load path): cuDeviceGetAttribute (a few H200-like figures),
 *     cuDeviceGetUuid(_v2), cuFuncGetAttribute / cuFuncSetAttribute / cuFuncSetCacheConfig (32 registers,
 *     LOCAL_SIZE_BYTES from a `.local ... __local_depotN[BYTES]` line of the entry, the dynamic shared memory
 *     opt-in checked against the device's maximum), and a linker (cuLinkCreate_v2, cuLinkAddData_v2,
 *     cuLinkComplete, cuLinkDestroy) that "compiles" PTX like cuModuleLoadData into a stand-in cubin
 *     ("\x7fELF" "CGCUBIN\n" and the PTX's text), which cuModuleLoadData loads without compiling; PTX whose
 *     `.target` is newer than sm_90 fails to compile with CUDA_ERROR_INVALID_PTX, as the JIT refuses it;
 * Two functions outside the CUDA API let tests look inside: cgcuda_standin_calls(NAME), how often an
 * export was entered, and cgcuda_standin_max_inside(), the most threads seen in cuModuleLoadData at once,
 * cgcuda_standin_max_launches(), in a launch at once (CGCUDA_UNLOAD_RACE=abort).
 *
 * Environment (a CGCUDA_* name or value it does not know stops the process with status 2):
 *   CGCUDA_COMPILE_MS (0), CGCUDA_KERNEL_MS (0), CGCUDA_COMPILER_RACE (off|abort), CGCUDA_UNLOAD_RACE
 *   (off|abort), CGCUDA_DEVICES (1), CGCUDA_DRIVER_VERSION (13000), CGCUDA_CTX_CREATE_HANG (off|on).
 *
 * Its parts: standin.h. */
#define _GNU_SOURCE
#include "standin.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- configuration ---- */

struct standin_cfg cfg = {0, 0, 1, 0, 0, CUDA_VERSION, 0};

extern char **environ;

static int parse_uint(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
    if (!*s) return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p)) return -1;
    errno = 0;
    unsigned long v = strtoul(s, NULL, 10);
    if (errno || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

static void bad(const char *entry, const char *accepted)
{
    fprintf(stderr, "cgcuda: %s is invalid; accepted: %s\n", entry, accepted);
    _exit(2);
}

__attribute__((constructor)) static void read_environment(void)
{
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "CGCUDA_", 7) != 0) continue;
        const char *eq = strchr(*e, '=');
        if (!eq) continue;
        size_t n = (size_t)(eq - *e);
        const char *v = eq + 1;
        unsigned long x;
        if (n == 17 && strncmp(*e, "CGCUDA_COMPILE_MS", n) == 0) {
            if (parse_uint(v, 0, 600000, &x)) bad(*e, "an integer from 0 to 600000 (milliseconds)");
            cfg.compile_ms = (unsigned)x;
        } else if (n == 16 && strncmp(*e, "CGCUDA_KERNEL_MS", n) == 0) {
            if (parse_uint(v, 0, 600000, &x)) bad(*e, "an integer from 0 to 600000 (milliseconds)");
            cfg.kernel_ms = (unsigned)x;
        } else if (n == 20 && strncmp(*e, "CGCUDA_COMPILER_RACE", n) == 0) {
            if (strcmp(v, "abort") == 0)
                cfg.race_abort = 1;
            else if (strcmp(v, "off") == 0)
                cfg.race_abort = 0;
            else
                bad(*e, "off or abort");
        } else if (n == 18 && strncmp(*e, "CGCUDA_UNLOAD_RACE", n) == 0) {
            if (strcmp(v, "abort") == 0)
                cfg.unload_race_abort = 1;
            else if (strcmp(v, "off") == 0)
                cfg.unload_race_abort = 0;
            else
                bad(*e, "off or abort");
        } else if (n == 14 && strncmp(*e, "CGCUDA_DEVICES", n) == 0) {
            if (parse_uint(v, 0, 16, &x)) bad(*e, "an integer from 0 to 16");
            cfg.devices = (unsigned)x;
        } else if (n == 21 && strncmp(*e, "CGCUDA_DRIVER_VERSION", n) == 0) {
            if (parse_uint(v, 2000, 99990, &x))
                bad(*e, "a CUDA version from 2000 to 99990 (1000 * major + 10 * minor)");
            cfg.driver_version = (int)x;
        } else if (n == 22 && strncmp(*e, "CGCUDA_CTX_CREATE_HANG", n) == 0) {
            if (strcmp(v, "on") == 0)
                cfg.ctx_create_hang = 1;
            else if (strcmp(v, "off") == 0)
                cfg.ctx_create_hang = 0;
            else
                bad(*e, "off or on");
        } else {
            bad(*e, "CGCUDA_COMPILE_MS, CGCUDA_KERNEL_MS, CGCUDA_COMPILER_RACE, CGCUDA_UNLOAD_RACE, CGCUDA_DEVICES, "
                    "CGCUDA_DRIVER_VERSION, CGCUDA_CTX_CREATE_HANG");
        }
    }
}

/* ---- call counts, for tests ---- */

static const char *const counted[] = {"cuInit",
                                      "cuDriverGetVersion",
                                      "cuDeviceGet",
                                      "cuDeviceGetCount",
                                      "cuDeviceGetName",
                                      "cuDeviceTotalMem",
                                      "cuDeviceTotalMem_v2",
                                      "cuCtxCreate",
                                      "cuCtxCreate_v2",
                                      "cuCtxCreate_v3",
                                      "cuCtxCreate_v4",
                                      "cuCtxDestroy",
                                      "cuCtxDestroy_v2",
                                      "cuCtxGetCurrent",
                                      "cuCtxSetCurrent",
                                      "cuCtxGetDevice",
                                      "cuCtxSynchronize",
                                      "cuDevicePrimaryCtxRetain",
                                      "cuDevicePrimaryCtxRelease",
                                      "cuDevicePrimaryCtxRelease_v2",
                                      "cuModuleLoadData",
                                      "cuModuleGetFunction",
                                      "cuModuleUnload",
                                      "cuLinkCreate_v2",
                                      "cuLinkAddData_v2",
                                      "cuLinkComplete",
                                      "cuLinkDestroy",
                                      "cuFuncGetAttribute",
                                      "cuFuncSetAttribute",
                                      "cuDeviceGetAttribute",
                                      "cuLaunchKernel",
                                      "cuLaunchKernel_ptsz",
                                      "cuStreamCreate",
                                      "cuStreamDestroy",
                                      "cuStreamDestroy_v2",
                                      "cuStreamSynchronize",
                                      "cuStreamSynchronize_ptsz",
                                      "cuMemAlloc_v2",
                                      "cuMemFree_v2",
                                      "cuMemcpyHtoD_v2",
                                      "cuMemcpyHtoD_v2_ptds",
                                      "cuMemcpyDtoH_v2",
                                      "cuMemcpyDtoH_v2_ptds",
                                      "cuGetErrorString",
                                      "cuGetErrorName",
                                      "cuGetExportTable",
                                      "cuGetProcAddress",
                                      "cuGetProcAddress_v2",
                                      NULL};
static atomic_int calls[sizeof counted / sizeof *counted];

void count(const char *name)
{
    for (size_t i = 0; counted[i]; i++)
        if (strcmp(counted[i], name) == 0) {
            atomic_fetch_add(&calls[i], 1);
            return;
        }
}

EXPORT int cgcuda_standin_calls(const char *name)
{
    for (size_t i = 0; counted[i]; i++)
        if (strcmp(counted[i], name) == 0) return atomic_load(&calls[i]);
    return -1;
}

atomic_int inside_compile, max_inside;

EXPORT int cgcuda_standin_max_inside(void) { return atomic_load(&max_inside); }
EXPORT int cgcuda_standin_max_launches(void) { return atomic_load(&max_launches); }

/* ---- objects ---- */

atomic_int initialized;
static struct CUctx_st primary[16];
static int primary_refs[16];
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
__thread CUcontext current;
_Atomic long long all_busy_until_ns;

/* ---- initialization, devices ---- */

EXPORT CUresult cuInit(unsigned int Flags)
{
    COUNT();
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    if (cfg.devices == 0) return CUDA_ERROR_NO_DEVICE;
    atomic_store(&initialized, 1);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    COUNT();
    if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = cfg.driver_version;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count_out)
{
    COUNT();
    NEED_INIT();
    if (!count_out) return CUDA_ERROR_INVALID_VALUE;
    *count_out = (int)cfg.devices;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    COUNT();
    NEED_INIT();
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || (unsigned)ordinal >= cfg.devices) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    COUNT();
    NEED_INIT();
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "callguard stand-in device %d (not a GPU)", dev);
    return CUDA_SUCCESS;
}

#define STANDIN_MEM (16ull << 30)

/* The 32-bit legacy form and the size_t form of CUDA 3.2. */
EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
    COUNT();
    NEED_INIT();
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = 0xffffffffu; /* what a 32-bit count can say of 16 GiB */
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    COUNT();
    NEED_INIT();
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)STANDIN_MEM;
    return CUDA_SUCCESS;
}

/* ---- contexts ---- */

/* CGCUDA_CTX_CREATE_HANG=on: open-gpu-kernel-modules#1277. Two context creations at once run the
 * kernel module out of a descriptor's memory; its clean-up then loops holding the RM global lock, and
 * every other thread waits for that lock: nothing returns. */
static atomic_int inside_ctx_create;
static pthread_mutex_t rm_lock = PTHREAD_MUTEX_INITIALIZER;

static void ctx_create_window(void)
{
    if (!cfg.ctx_create_hang) return;
    atomic_fetch_add(&inside_ctx_create, 1);
    struct timespec t = {0, 2000000};
    nanosleep(&t, NULL);
    if (atomic_load(&inside_ctx_create) > 1) {
        if (pthread_mutex_trylock(&rm_lock) == 0) {
            fprintf(stderr, "cgcuda: CGCUDA_CTX_CREATE_HANG=on: two context creations at once: the RM lock "
                            "is held for ever\n");
            for (;;)
                pause();
        }
        pthread_mutex_lock(&rm_lock);
    }
    atomic_fetch_sub(&inside_ctx_create, 1);
}

static CUresult ctx_create(CUcontext *pctx, CUdevice dev)
{
    NEED_INIT();
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    ctx_create_window();
    CUcontext c = calloc(1, sizeof *c);
    if (!c) return CUDA_ERROR_OUT_OF_MEMORY;
    c->magic = CTX_MAGIC;
    c->dev = dev;
    current = c; /* a created context is made current to the calling thread */
    *pctx = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    COUNT();
    (void)flags;
    return ctx_create(pctx, dev);
}

EXPORT CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    COUNT();
    (void)flags;
    return ctx_create(pctx, dev);
}

EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
                               CUdevice dev)
{
    COUNT();
    (void)flags;
    if (numParams < 0 || (numParams > 0 && !paramsArray)) return CUDA_ERROR_INVALID_VALUE;
    return ctx_create(pctx, dev);
}

EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev)
{
    COUNT();
    (void)ctxCreateParams;
    (void)flags;
    return ctx_create(pctx, dev);
}

static CUresult ctx_destroy(CUcontext ctx)
{
    NEED_INIT();
    if (!valid_ctx(ctx) || ctx->primary) return CUDA_ERROR_INVALID_CONTEXT;
    if (current == ctx) current = NULL;
    ctx->magic = 0;
    free(ctx);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxDestroy(CUcontext ctx)
{
    COUNT();
    return ctx_destroy(ctx);
}

EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    COUNT();
    return ctx_destroy(ctx);
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    COUNT();
    NEED_INIT();
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = current;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    COUNT();
    NEED_INIT();
    if (ctx && !valid_ctx(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    current = ctx;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    COUNT();
    NEED_INIT();
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    *device = current->dev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    COUNT();
    NEED_INIT();
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    sleep_until(atomic_load(&all_busy_until_ns));
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    COUNT();
    NEED_INIT();
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    ctx_create_window();
    pthread_mutex_lock(&primary_lock);
    primary[dev].magic = CTX_MAGIC;
    primary[dev].dev = dev;
    primary[dev].primary = 1;
    primary_refs[dev]++;
    pthread_mutex_unlock(&primary_lock);
    *pctx = &primary[dev];
    return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice dev)
{
    NEED_INIT();
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&primary_lock);
    if (primary_refs[dev] == 0)
        r = CUDA_ERROR_INVALID_CONTEXT;
    else if (--primary_refs[dev] == 0)
        primary[dev].magic = 0;
    pthread_mutex_unlock(&primary_lock);
    return r;
}

EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    COUNT();
    return primary_release(dev);
}

EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    COUNT();
    return primary_release(dev);
}
