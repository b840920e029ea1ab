/* A stand-in for tests, not NVIDIA's driver: a tiny libcuda.so.1 for CI machines without a GPU.
 *
 * It implements a few dozen driver entry points with cuda.h's own prototypes (compiled with
 * -D__CUDA_API_VERSION_INTERNAL, so every name below is the exported name, legacy or versioned):
 *   - cuInit, cuDriverGetVersion, devices (one by default), contexts (cuCtxCreate and its _v2.._v4
 *     forms, the primary context), errors;
 *   - cuModuleLoadData, which "compiles" for CGCUDA_COMPILE_MS and, with CGCUDA_COMPILER_RACE=abort,
 *     aborts when two threads are inside it at once (the window is the sleep, so the race shows on 2 cores);
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
 * export was entered, and cgcuda_standin_max_inside(), the most threads seen in cuModuleLoadData at once.
 *
 * Environment (a CGCUDA_* name or value it does not know stops the process with status 2):
 *   CGCUDA_COMPILE_MS (0), CGCUDA_KERNEL_MS (0), CGCUDA_COMPILER_RACE (off|abort), CGCUDA_DEVICES (1),
 *   CGCUDA_DRIVER_VERSION (13000). */
#define _GNU_SOURCE
#include <cuda.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* ---- configuration ---- */

static struct {
    unsigned compile_ms, kernel_ms, devices;
    int race_abort;
    int driver_version;
} cfg = {0, 0, 1, 0, CUDA_VERSION};

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
        } else if (n == 14 && strncmp(*e, "CGCUDA_DEVICES", n) == 0) {
            if (parse_uint(v, 0, 16, &x)) bad(*e, "an integer from 0 to 16");
            cfg.devices = (unsigned)x;
        } else if (n == 21 && strncmp(*e, "CGCUDA_DRIVER_VERSION", n) == 0) {
            if (parse_uint(v, 2000, 99990, &x))
                bad(*e, "a CUDA version from 2000 to 99990 (1000 * major + 10 * minor)");
            cfg.driver_version = (int)x;
        } else {
            bad(*e, "CGCUDA_COMPILE_MS, CGCUDA_KERNEL_MS, CGCUDA_COMPILER_RACE, CGCUDA_DEVICES, CGCUDA_DRIVER_VERSION");
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

static void count(const char *name)
{
    for (size_t i = 0; counted[i]; i++)
        if (strcmp(counted[i], name) == 0) {
            atomic_fetch_add(&calls[i], 1);
            return;
        }
}
#define COUNT() count(__func__)

EXPORT int cgcuda_standin_calls(const char *name)
{
    for (size_t i = 0; counted[i]; i++)
        if (strcmp(counted[i], name) == 0) return atomic_load(&calls[i]);
    return -1;
}

static atomic_int inside_compile, max_inside;

EXPORT int cgcuda_standin_max_inside(void) { return atomic_load(&max_inside); }

/* ---- objects ---- */

#define CTX_MAGIC 0x63747843u /* "Cxtc" */
struct CUctx_st {
    unsigned magic;
    CUdevice dev;
    int primary;
};
#define MAX_ENTRIES 8
struct CUfunc_st {
    struct CUmod_st *mod;
    char name[64];
    int local_bytes, max_dynamic_shared;
};
#define MOD_MAGIC 0x646f4d43u
struct CUmod_st {
    unsigned magic;
    unsigned nfunc;
    struct CUfunc_st func[MAX_ENTRIES];
};
struct CUstream_st {
    _Atomic long long busy_until_ns; /* CLOCK_MONOTONIC time the last launch ends */
};

static atomic_int initialized;
static struct CUctx_st primary[16];
static int primary_refs[16];
static pthread_mutex_t primary_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread CUcontext current;
static struct CUstream_st legacy_stream;
static __thread struct CUstream_st per_thread_stream;
static _Atomic long long all_busy_until_ns;

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_until(long long t)
{
    for (long long left; (left = t - now_ns()) > 0;) {
        struct timespec ts = {(time_t)(left / 1000000000LL), (long)(left % 1000000000LL)};
        nanosleep(&ts, NULL);
    }
}

static void sleep_ms(unsigned ms) { sleep_until(now_ns() + (long long)ms * 1000000LL); }

#define NEED_INIT()                                                                                                    \
    do {                                                                                                               \
        if (!atomic_load(&initialized)) return CUDA_ERROR_NOT_INITIALIZED;                                             \
    } while (0)

static int valid_ctx(CUcontext c) { return c && c->magic == CTX_MAGIC; }

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

static int valid_dev(CUdevice d) { return d >= 0 && (unsigned)d < cfg.devices; }

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

static CUresult ctx_create(CUcontext *pctx, CUdevice dev)
{
    NEED_INIT();
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
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

/* ---- modules ---- */

/* The "compiler": a PTX-like text with at least one `.entry NAME`, for a `.target` up to sm_90. The sleep is the window
 * in which CGCUDA_COMPILER_RACE=abort looks for a second thread, as a compiler that is not reentrant would fail. */
/* The compile window, shared by cuModuleLoadData (PTX) and cuLinkComplete. */
static void compile_window(const char *who)
{
    int in = atomic_fetch_add(&inside_compile, 1) + 1;
    for (int m = atomic_load(&max_inside); in > m && !atomic_compare_exchange_weak(&max_inside, &m, in);) {}
    if (cfg.race_abort && in > 1) {
        fprintf(stderr,
                "cgcuda: CGCUDA_COMPILER_RACE=abort: %d threads inside %s at once; aborting like a "
                "compiler that is not reentrant\n",
                in, who);
        abort();
    }
    sleep_ms(cfg.compile_ms);
    if (cfg.race_abort && atomic_load(&inside_compile) > 1) {
        fprintf(stderr, "cgcuda: CGCUDA_COMPILER_RACE=abort: another thread entered %s meanwhile\n", who);
        abort();
    }
    atomic_fetch_sub(&inside_compile, 1);
}

#define CUBIN_MAGIC                                                                                                    \
    "\x7f"                                                                                                             \
    "ELF"                                                                                                              \
    "CGCUBIN\n"

/* The entries of a PTX-like text, each with the bytes of its `__local_depotN[BYTES]` if it has one. */
static CUresult parse_entries(const char *text, CUmodule mod)
{
    /* PTX for a newer architecture than the device's (compute capability 9.0): the JIT refuses it. */
    const char *target = strstr(text, ".target");
    if (target) {
        target += 7;
        while (*target == ' ' || *target == '\t')
            target++;
        if (strncmp(target, "sm_", 3) == 0 && atoi(target + 3) > 90) return CUDA_ERROR_INVALID_PTX;
    }
    for (const char *p = text; (p = strstr(p, ".entry")) != NULL;) {
        p += 6;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$");
        if (n == 0 || n >= sizeof mod->func[0].name || mod->nfunc == MAX_ENTRIES) return CUDA_ERROR_INVALID_PTX;
        struct CUfunc_st *f = &mod->func[mod->nfunc];
        memcpy(f->name, p, n);
        f->mod = mod;
        f->max_dynamic_shared = 49152 - 1024; /* the default: 48 KiB less the static shared memory */
        const char *next = strstr(p, ".entry"), *depot = strstr(p, "__local_depot");
        if (depot && (!next || depot < next)) {
            const char *b = strchr(depot, '[');
            if (b && (!next || b < next)) f->local_bytes = atoi(b + 1);
        }
        mod->nfunc++;
    }
    return mod->nfunc ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

/* The "compiler": a PTX-like text with at least one `.entry NAME`, for a `.target` up to sm_90. The sleep is the window
 * in which CGCUDA_COMPILER_RACE=abort looks for a second thread, as a compiler that is not reentrant would fail. A
 * stand-in cubin (from cuLinkComplete) loads without compiling, as a real cubin skips the PTX JIT. */
EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    COUNT();
    NEED_INIT();
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    const char *text = image;
    size_t ml = sizeof CUBIN_MAGIC - 1;
    if (memcmp(image,
               "\x7f"
               "ELF",
               4) == 0) {
        if (memcmp(image, CUBIN_MAGIC, ml) != 0) return CUDA_ERROR_INVALID_IMAGE;
        text += ml;
    } else {
        compile_window("cuModuleLoadData");
    }
    CUmodule mod = calloc(1, sizeof *mod);
    if (!mod) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = parse_entries(text, mod);
    if (r != CUDA_SUCCESS) {
        free(mod);
        return r;
    }
    mod->magic = MOD_MAGIC;
    *module = mod;
    return CUDA_SUCCESS;
}

/* ---- the linker: PTX in, a stand-in cubin out ---- */

struct CUlinkState_st {
    char *ptx;
    void *cubin;
};

EXPORT CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                CUlinkState *stateOut)
{
    COUNT();
    NEED_INIT();
    (void)options, (void)optionValues;
    if (!stateOut || (numOptions && (!options || !optionValues))) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    *stateOut = calloc(1, sizeof **stateOut);
    return *stateOut ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                                 unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    COUNT();
    NEED_INIT();
    (void)name, (void)numOptions, (void)options, (void)optionValues;
    if (!state || !data || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_JIT_INPUT_PTX) return CUDA_ERROR_INVALID_VALUE; /* the stand-in links PTX only */
    if (state->ptx) return CUDA_ERROR_INVALID_VALUE;               /* and one input */
    state->ptx = strndup(data, size);
    return state->ptx ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    COUNT();
    NEED_INIT();
    if (!state || !cubinOut || !sizeOut || !state->ptx) return CUDA_ERROR_INVALID_VALUE;
    compile_window("cuLinkComplete");
    struct CUmod_st check = {0};
    CUresult r = parse_entries(state->ptx, &check);
    if (r != CUDA_SUCCESS) return r;
    size_t ml = sizeof CUBIN_MAGIC - 1, n = strlen(state->ptx) + 1;
    free(state->cubin);
    if (!(state->cubin = malloc(ml + n))) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(state->cubin, CUBIN_MAGIC, ml);
    memcpy((char *)state->cubin + ml, state->ptx, n);
    *cubinOut = state->cubin; /* owned by the state, as the driver's is */
    *sizeOut = ml + n;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLinkDestroy(CUlinkState state)
{
    COUNT();
    if (!state) return CUDA_ERROR_INVALID_HANDLE;
    free(state->ptx);
    free(state->cubin);
    free(state);
    return CUDA_SUCCESS;
}

/* ---- device and function attributes (an H200's figures where it matters) ---- */

#define OPTIN_SHARED 232448
#define SM_SHARED 233472

EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    COUNT();
    NEED_INIT();
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = OPTIN_SHARED; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *pi = SM_SHARED; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *pi = 49152; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 132; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    COUNT();
    NEED_INIT();
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    memset(uuid, 0, sizeof *uuid);
    memcpy(uuid->bytes, "cg stand-in dev", 15);
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

static int valid_func(CUfunction f) { return f && f->mod && f->mod->magic == MOD_MAGIC; }

EXPORT CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    COUNT();
    NEED_INIT();
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_func(hfunc)) return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = hfunc->local_bytes; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 1024; return CUDA_SUCCESS; /* static shared memory */
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = hfunc->max_dynamic_shared; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    COUNT();
    NEED_INIT();
    if (!valid_func(hfunc)) return CUDA_ERROR_INVALID_HANDLE;
    if (attrib != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_INVALID_VALUE;
    if (value < 0 || value > OPTIN_SHARED - 1024) return CUDA_ERROR_INVALID_VALUE;
    hfunc->max_dynamic_shared = value;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    NEED_INIT();
    (void)config;
    return valid_func(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    COUNT();
    NEED_INIT();
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!hmod || hmod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < hmod->nfunc; i++)
        if (strcmp(hmod->func[i].name, name) == 0) {
            *hfunc = &hmod->func[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    COUNT();
    NEED_INIT();
    if (!hmod || hmod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    hmod->magic = 0;
    free(hmod);
    return CUDA_SUCCESS;
}

/* ---- streams and launches ---- */

/* NULL is the legacy default stream, or the thread's own one in the _ptsz forms. */
static struct CUstream_st *stream_of(CUstream s, int per_thread)
{
    if (s == CU_STREAM_PER_THREAD || (s == NULL && per_thread)) return &per_thread_stream;
    if (s == NULL || s == CU_STREAM_LEGACY) return &legacy_stream;
    return s;
}

static CUresult launch(CUfunction f, CUstream s, int per_thread)
{
    NEED_INIT();
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (!f || !f->mod || f->mod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    struct CUstream_st *st = stream_of(s, per_thread);
    long long start = now_ns(), busy = atomic_load(&st->busy_until_ns);
    long long end = (busy > start ? busy : start) + (long long)cfg.kernel_ms * 1000000LL;
    atomic_store(&st->busy_until_ns, end);
    for (long long all = atomic_load(&all_busy_until_ns);
         end > all && !atomic_compare_exchange_weak(&all_busy_until_ns, &all, end);) {}
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                               unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                               unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    COUNT();
    (void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY, (void)blockDimZ;
    (void)sharedMemBytes, (void)kernelParams, (void)extra;
    return launch(f, hStream, 0);
}

EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                    unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    COUNT();
    (void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY, (void)blockDimZ;
    (void)sharedMemBytes, (void)kernelParams, (void)extra;
    return launch(f, hStream, 1);
}

EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    COUNT();
    NEED_INIT();
    (void)Flags;
    if (!phStream) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    *phStream = calloc(1, sizeof **phStream);
    return *phStream ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult stream_destroy(CUstream s)
{
    NEED_INIT();
    if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return CUDA_ERROR_INVALID_HANDLE;
    free(s);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy(CUstream hStream)
{
    COUNT();
    return stream_destroy(hStream);
}

EXPORT CUresult cuStreamDestroy_v2(CUstream hStream)
{
    COUNT();
    return stream_destroy(hStream);
}

static CUresult stream_sync(CUstream s, int per_thread)
{
    NEED_INIT();
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    sleep_until(atomic_load(&stream_of(s, per_thread)->busy_until_ns));
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream hStream)
{
    COUNT();
    return stream_sync(hStream, 0);
}

EXPORT CUresult cuStreamSynchronize_ptsz(CUstream hStream)
{
    COUNT();
    return stream_sync(hStream, 1);
}

EXPORT CUresult cuStreamQuery(CUstream hStream)
{
    COUNT();
    NEED_INIT();
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    return now_ns() < atomic_load(&stream_of(hStream, 0)->busy_until_ns) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

/* ---- events: done when the work before their record is ---- */

struct CUevent_st {
    _Atomic long long done_ns; /* 0: never recorded */
};

EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    COUNT();
    NEED_INIT();
    (void)Flags;
    if (!phEvent) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    *phEvent = calloc(1, sizeof **phEvent);
    return *phEvent ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
{
    COUNT();
    NEED_INIT();
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    long long busy = atomic_load(&stream_of(hStream, 0)->busy_until_ns), now = now_ns();
    atomic_store(&hEvent->done_ns, busy > now ? busy : now);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventQuery(CUevent hEvent)
{
    COUNT();
    NEED_INIT();
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    return now_ns() < atomic_load(&hEvent->done_ns) ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
    COUNT();
    NEED_INIT();
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    sleep_until(atomic_load(&hEvent->done_ns));
    return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent hEvent)
{
    COUNT();
    NEED_INIT();
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    free(hEvent);
    return CUDA_SUCCESS;
}

/* ---- memory: host memory stands in for the device's ---- */

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    COUNT();
    NEED_INIT();
    if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    void *p = malloc(bytesize);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    COUNT();
    NEED_INIT();
    free((void *)(uintptr_t)dptr);
    return CUDA_SUCCESS;
}

static CUresult copy(void *dst, const void *src, size_t n)
{
    NEED_INIT();
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (n && (!dst || !src)) return CUDA_ERROR_INVALID_VALUE;
    sleep_until(atomic_load(&legacy_stream.busy_until_ns)); /* a synchronous copy waits for the default stream */
    if (n) memcpy(dst, src, n);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    COUNT();
    return copy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
}

EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    COUNT();
    return copy((void *)(uintptr_t)dstDevice, srcHost, ByteCount);
}

EXPORT CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    COUNT();
    return copy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
}

EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    COUNT();
    return copy(dstHost, (const void *)(uintptr_t)srcDevice, ByteCount);
}

/* ---- errors ---- */

static const struct {
    CUresult code;
    const char *name, *text;
} errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
};

EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    COUNT();
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == error) {
            *pStr = errors[i].text;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    COUNT();
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof errors / sizeof *errors; i++)
        if (errors[i].code == error) {
            *pStr = errors[i].name;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

/* One private table, for tests that check the call reaches the driver untouched. Its id spells "cg stand-in tbl". */
static const CUuuid standin_table_id = {{'c', 'g', ' ', 's', 't', 'a', 'n', 'd', '-', 'i', 'n', ' ', 't', 'b', 'l', 0}};
static const void *const standin_table[] = {(const void *)(2 * sizeof(void *)), (const void *)&standin_table_id};

EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    COUNT();
    if (!ppExportTable || !pExportTableId) return CUDA_ERROR_INVALID_VALUE;
    if (memcmp(pExportTableId, &standin_table_id, sizeof standin_table_id) != 0) {
        *ppExportTable = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    *ppExportTable = standin_table;
    return CUDA_SUCCESS;
}

/* ---- cuGetProcAddress ---- */

/* Each export with the CUDA version that introduced its ABI and whether it is a per-thread-stream
 * form: cudaTypedefs.h's PFN_<name>_v<version>[_ptds|_ptsz]. */
#define E(base, version, pt, fn)                                                                                       \
    {                                                                                                                  \
        base, version, pt, (void *)fn                                                                                  \
    }
static const struct entry {
    const char *base;
    int version, per_thread;
    void *fn;
} entries[] = {
    E("cuInit", 2000, 0, cuInit),
    E("cuDriverGetVersion", 2020, 0, cuDriverGetVersion),
    E("cuDeviceGet", 2000, 0, cuDeviceGet),
    E("cuDeviceGetCount", 2000, 0, cuDeviceGetCount),
    E("cuDeviceGetName", 2000, 0, cuDeviceGetName),
    E("cuDeviceTotalMem", 2000, 0, cuDeviceTotalMem),
    E("cuDeviceTotalMem", 3020, 0, cuDeviceTotalMem_v2),
    E("cuCtxCreate", 2000, 0, cuCtxCreate),
    E("cuCtxCreate", 3020, 0, cuCtxCreate_v2),
    E("cuCtxCreate", 11040, 0, cuCtxCreate_v3),
    E("cuCtxCreate", 12050, 0, cuCtxCreate_v4),
    E("cuCtxDestroy", 2000, 0, cuCtxDestroy),
    E("cuCtxDestroy", 4000, 0, cuCtxDestroy_v2),
    E("cuCtxGetCurrent", 4000, 0, cuCtxGetCurrent),
    E("cuCtxSetCurrent", 4000, 0, cuCtxSetCurrent),
    E("cuCtxGetDevice", 2000, 0, cuCtxGetDevice),
    E("cuCtxSynchronize", 2000, 0, cuCtxSynchronize),
    E("cuDevicePrimaryCtxRetain", 7000, 0, cuDevicePrimaryCtxRetain),
    E("cuDevicePrimaryCtxRelease", 7000, 0, cuDevicePrimaryCtxRelease),
    E("cuDevicePrimaryCtxRelease", 11000, 0, cuDevicePrimaryCtxRelease_v2),
    E("cuModuleLoadData", 2000, 0, cuModuleLoadData),
    E("cuModuleGetFunction", 2000, 0, cuModuleGetFunction),
    E("cuModuleUnload", 2000, 0, cuModuleUnload),
    E("cuLaunchKernel", 4000, 0, cuLaunchKernel),
    E("cuLaunchKernel", 7000, 1, cuLaunchKernel_ptsz),
    E("cuStreamCreate", 2000, 0, cuStreamCreate),
    E("cuStreamDestroy", 2000, 0, cuStreamDestroy),
    E("cuStreamDestroy", 4000, 0, cuStreamDestroy_v2),
    E("cuStreamSynchronize", 2000, 0, cuStreamSynchronize),
    E("cuStreamSynchronize", 7000, 1, cuStreamSynchronize_ptsz),
    /* the stand-in has no 32-bit legacy memory calls: asked for version 2000 they are "not sufficient" */
    E("cuMemAlloc", 3020, 0, cuMemAlloc_v2),
    E("cuMemFree", 3020, 0, cuMemFree_v2),
    E("cuMemcpyHtoD", 3020, 0, cuMemcpyHtoD_v2),
    E("cuMemcpyHtoD", 7000, 1, cuMemcpyHtoD_v2_ptds),
    E("cuMemcpyDtoH", 3020, 0, cuMemcpyDtoH_v2),
    E("cuMemcpyDtoH", 7000, 1, cuMemcpyDtoH_v2_ptds),
    E("cuGetErrorString", 6000, 0, cuGetErrorString),
    E("cuGetErrorName", 6000, 0, cuGetErrorName),
    E("cuGetExportTable", 3000, 0, cuGetExportTable),
    E("cuGetProcAddress", 11030, 0, cuGetProcAddress),
    E("cuGetProcAddress", 12000, 0, cuGetProcAddress_v2),
};

/* The newest form not newer than `version`. With the per-thread flag, a name that has per-thread forms gets
 * the newest of them, and none when `version` is older than the first (7000): the real driver 580.159.04
 * answers cuStreamSynchronize at 6050 and cuMemcpyDtoH at 3020 with CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
 * (the 4-argument form: CUDA_ERROR_NOT_FOUND), not with the legacy-stream form (tests/gpu/check.sh on the
 * H200). A name without per-thread forms gets its legacy-stream one (cuda.h's cuGetProcAddress documentation). */
static CUresult lookup(const char *symbol, void **pfn, int version, cuuint64_t flags,
                       CUdriverProcAddressQueryResult *status)
{
    if (!symbol || !pfn) return CUDA_ERROR_INVALID_VALUE;
    if (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE;
    if (version > cfg.driver_version) return CUDA_ERROR_INVALID_VALUE; /* "greater than the driver version" */
    int per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    const struct entry *best = NULL, *best_pt = NULL;
    int known = 0, has_pt = 0;
    for (size_t i = 0; i < sizeof entries / sizeof *entries; i++) {
        const struct entry *e = &entries[i];
        if (strcmp(e->base, symbol) != 0) continue;
        known = 1;
        has_pt |= e->per_thread;
        if (e->version > version) continue;
        const struct entry **slot = e->per_thread ? &best_pt : &best;
        if (!*slot || e->version > (*slot)->version) *slot = e;
    }
    if (per_thread && has_pt) best = best_pt;
    *pfn = best ? best->fn : NULL;
    if (status)
        *status = best    ? CU_GET_PROC_ADDRESS_SUCCESS
                  : known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
                          : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
}

/* CUDA 12.0's form: a name or version it cannot answer is CUDA_SUCCESS with a NULL pointer and a status. */
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *symbolStatus)
{
    COUNT();
    return lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

/* CUDA 11.3's form: the same search; what it cannot answer is CUDA_ERROR_NOT_FOUND (11.x documentation). */
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    COUNT();
    CUdriverProcAddressQueryResult status;
    CUresult r = lookup(symbol, pfn, cudaVersion, flags, &status);
    if (r == CUDA_SUCCESS && status != CU_GET_PROC_ADDRESS_SUCCESS) return CUDA_ERROR_NOT_FOUND;
    return r;
}
