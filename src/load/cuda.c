/* CUDA, as Triton's NVIDIA backend loads a kernel: a current context in the
 * calling thread (the primary context of req->cuda_device retained and made
 * current when there is none), cuModuleLoadData and cuModuleGetFunction,
 * registers, spills (LOCAL_SIZE_BYTES / 4) and max threads from
 * cuFuncGetAttribute, and the dynamic shared memory opt-in above 48 KiB.
 *
 * With the disk cache, PTX is turned into a cubin once with the linker API
 * (cuLinkCreate / AddData / Complete: that is the JIT compile) and the cubin
 * is loaded and stored, so a later process loads the cubin and skips the PTX
 * JIT. Without it, the PTX goes to cuModuleLoadData as Triton does. */
#define _GNU_SOURCE
#include "internal.h"

#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CU_FUNCS(X)                                                                                                    \
    X(cuInit)                                                                                                          \
    X(cuDriverGetVersion)                                                                                              \
    X(cuCtxGetCurrent)                                                                                                 \
    X(cuCtxSetCurrent)                                                                                                 \
    X(cuCtxGetDevice)                                                                                                  \
    X(cuDevicePrimaryCtxRetain)                                                                                        \
    X(cuDeviceGetAttribute)                                                                                            \
    X(cuDeviceGetUuid_v2)                                                                                              \
    X(cuModuleLoadData)                                                                                                \
    X(cuModuleGetFunction)                                                                                             \
    X(cuModuleUnload)                                                                                                  \
    X(cuFuncGetAttribute)                                                                                              \
    X(cuFuncSetAttribute)                                                                                              \
    X(cuFuncSetCacheConfig)                                                                                            \
    X(cuLinkCreate_v2)                                                                                                 \
    X(cuLinkAddData_v2)                                                                                                \
    X(cuLinkComplete)                                                                                                  \
    X(cuLinkDestroy)

static struct {
#define FIELD(name) __typeof__(name) *name;
    CU_FUNCS(FIELD)
#undef FIELD
} cu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *missing;
static void *lib;

static void resolve(void)
{
#define RESOLVE(name)                                                                                                  \
    if (!(cu.name = (__typeof__(name) *)lb_resolve("libcuda.so.1", &lib, #name)) && !missing) missing = #name;
    CU_FUNCS(RESOLVE)
#undef RESOLVE
}

static int cu_init(cg_load_result *res)
{
    pthread_once(&once, resolve);
    if (missing)
        return lb_fail(res, CG_ENOENT, NULL, 0,
                       "CUDA: %s is not in the process nor in libcuda.so.1 (is the driver installed?)", missing);
    return CG_OK;
}

#define CU_FAIL(res, call, r, ...)                                                                                     \
    lb_fail(res, (r) == CUDA_ERROR_OUT_OF_MEMORY ? CG_LOAD_ERESOURCES : CG_LOAD_EDRIVER, call, (long)(r), __VA_ARGS__)

/* Triton's way: the current context, else the device's primary one made current. */
static int current_context(const cg_load_request *req, CUcontext *ctx, CUdevice *dev, cg_load_result *res)
{
    CUresult r = cu.cuCtxGetCurrent(ctx);
    if (r == CUDA_ERROR_NOT_INITIALIZED) {
        if ((r = cu.cuInit(0)) != CUDA_SUCCESS) return CU_FAIL(res, "cuInit", r, "cuInit failed (error %d)", (int)r);
        r = cu.cuCtxGetCurrent(ctx);
    }
    if (r != CUDA_SUCCESS) return CU_FAIL(res, "cuCtxGetCurrent", r, "cuCtxGetCurrent failed (error %d)", (int)r);
    if (!*ctx) {
        if ((r = cu.cuDevicePrimaryCtxRetain(ctx, req->cuda_device)) != CUDA_SUCCESS)
            return CU_FAIL(res, "cuDevicePrimaryCtxRetain", r, "cuDevicePrimaryCtxRetain(%d) failed (error %d)",
                           req->cuda_device, (int)r);
        if ((r = cu.cuCtxSetCurrent(*ctx)) != CUDA_SUCCESS)
            return CU_FAIL(res, "cuCtxSetCurrent", r, "cuCtxSetCurrent failed (error %d)", (int)r);
    }
    if ((r = cu.cuCtxGetDevice(dev)) != CUDA_SUCCESS)
        return CU_FAIL(res, "cuCtxGetDevice", r, "cuCtxGetDevice failed (error %d)", (int)r);
    return CG_OK;
}

static int cu_identity(const cg_load_request *req, lb_str *key, lb_str *memkey, cg_load_result *res)
{
    CUcontext ctx = NULL;
    CUdevice dev = 0;
    int rc = current_context(req, &ctx, &dev, res);
    if (rc != CG_OK) return rc;
    CUuuid uuid;
    char hex[33];
    if (cu.cuDeviceGetUuid_v2(&uuid, dev) == CUDA_SUCCESS) {
        lb_hex((const uint8_t *)uuid.bytes, 16, hex);
        lb_str_add(key, "device=%s\n", hex);
    }
    int version = 0, major = 0, minor = 0;
    cu.cuDriverGetVersion(&version);
    cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    lb_str_add(key, "driver_version=%d\ncompute_capability=%d.%d\n", version, major, minor);
    /* The driver's build (cuDriverGetVersion says only the CUDA version it
     * supports) and its PTX JIT, opened at the first JIT: their files. */
    /* Only libcuda among the loaded objects: the JIT library is opened at the
     * first JIT, so matching it there would change the key mid-run (seen on
     * the H200); it is looked for beside the driver instead. */
    static const char *const drivers[] = {"libcuda.so", NULL};
    static const char *const compilers[] = {"libnvidia-ptxjitcompiler.so.1", NULL};
    lb_str_add(key, "compiler=");
    lb_objects_identity(key, drivers, compilers);
    lb_str_add(key, "\n");
    lb_str_add(memkey, "context=%p\n", (void *)ctx);
    return CG_OK;
}

static void cu_destroy(void *module, void *kernel)
{
    (void)kernel; /* a CUfunction belongs to its module */
    if (module) cu.cuModuleUnload(module);
}

/* Loads an image (NUL-terminated PTX or a cubin) and takes the function and its figures. */
static int load_image(const cg_load_request *req, const void *image, lb_loaded *out, char *log, cg_load_result *res)
{
    CUmodule mod = NULL;
    CUfunction fn = NULL;
    CUresult r = cu.cuModuleLoadData(&mod, image);
    if (r != CUDA_SUCCESS) {
        lb_keep_log(res, log);
        return CU_FAIL(res, "cuModuleLoadData", r, "cuModuleLoadData failed (error %d)", (int)r);
    }
    if ((r = cu.cuModuleGetFunction(&fn, mod, req->kernel_name)) != CUDA_SUCCESS) {
        cu.cuModuleUnload(mod);
        lb_keep_log(res, log);
        if (r == CUDA_ERROR_NOT_FOUND)
            return lb_fail(res, CG_ENOENT, "cuModuleGetFunction", (long)r, "kernel '%s' is not in the module",
                           req->kernel_name);
        return CU_FAIL(res, "cuModuleGetFunction", r, "cuModuleGetFunction('%s') failed (error %d)", req->kernel_name,
                       (int)r);
    }
    int regs = 0, local = 0, threads = 0, shared = 0;
    if ((r = cu.cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, fn)) != CUDA_SUCCESS ||
        (r = cu.cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, fn)) != CUDA_SUCCESS ||
        (r = cu.cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn)) != CUDA_SUCCESS ||
        (r = cu.cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn)) != CUDA_SUCCESS) {
        cu.cuModuleUnload(mod);
        lb_keep_log(res, log);
        return CU_FAIL(res, "cuFuncGetAttribute", r, "cuFuncGetAttribute failed (error %d)", (int)r);
    }
    char *flags = strdup(req->build_flags ? req->build_flags : "");
    if (!flags) {
        cu.cuModuleUnload(mod);
        free(log);
        return lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    }
    *out = (lb_loaded){.module = mod,
                       .kernel = fn,
                       .n_regs = regs,
                       .n_spills = local / 4,
                       .max_threads = threads,
                       .simd_width = 32,
                       .spill_bytes = local,
                       .private_bytes = local,
                       .local_bytes = shared,
                       .flags = flags,
                       .log = log};
    return CG_OK;
}

/* PTX to a cubin with the linker; the cubin (malloc'd) and the linker's logs. */
static int link_ptx(const char *ptx, size_t n, void **cubin, size_t *size, char **log, cg_load_result *res)
{
    enum { LOG = 16384 };
    char *info = calloc(1, LOG), *error = calloc(1, LOG);
    if (!info || !error) {
        free(info);
        free(error);
        return lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    }
    CUjit_option opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *vals[] = {info, (void *)(uintptr_t)LOG, error, (void *)(uintptr_t)LOG};
    CUlinkState st = NULL;
    const char *call = "cuLinkCreate";
    CUresult r = cu.cuLinkCreate_v2(4, opts, vals, &st);
    if (r == CUDA_SUCCESS) {
        call = "cuLinkAddData";
        r = cu.cuLinkAddData_v2(st, CU_JIT_INPUT_PTX, (void *)ptx, n, "kernel.ptx", 0, NULL, NULL);
    }
    void *out = NULL;
    size_t outn = 0;
    if (r == CUDA_SUCCESS) {
        call = "cuLinkComplete";
        r = cu.cuLinkComplete(st, &out, &outn);
    }
    void *copy = NULL;
    if (r == CUDA_SUCCESS && (copy = malloc(outn))) memcpy(copy, out, outn);
    if (st) cu.cuLinkDestroy(st); /* owns `out` */
    lb_str l = {0};
    lb_str_add(&l, "%s%s%s", info, info[0] && error[0] ? "\n" : "", error);
    free(info);
    free(error);
    *log = lb_str_take(&l);
    if (r != CUDA_SUCCESS) {
        lb_keep_log(res, *log);
        *log = NULL;
        return CU_FAIL(res, call, r, "%s failed (error %d)", call, (int)r);
    }
    if (!copy) return lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    *cubin = copy;
    *size = outn;
    return CG_OK;
}

static int cu_build(const cg_load_request *req, lb_loaded *out, cg_load_result *res)
{
    CUcontext ctx;
    CUdevice dev;
    int rc = current_context(req, &ctx, &dev, res);
    if (rc != CG_OK) return rc;
    lb_stat_add(&lb_stats.builds);
    if (req->format == CG_LOAD_FORMAT_NATIVE) return load_image(req, req->bytes, out, strdup(""), res);
    /* PTX must be NUL-terminated for cuModuleLoadData */
    char *ptx = malloc(req->size + 1);
    if (!ptx) return lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    memcpy(ptx, req->bytes, req->size);
    ptx[req->size] = '\0';
    size_t n = strlen(ptx) + 1;
    int use_linker = !(req->flags & (CG_LOAD_NO_CACHE | CG_LOAD_NO_DISK_CACHE)) && lb_disk_enabled();
    if (!use_linker) {
        rc = load_image(req, ptx, out, strdup(""), res);
        free(ptx);
        return rc;
    }
    void *cubin = NULL;
    size_t size = 0;
    char *log = NULL;
    rc = link_ptx(ptx, n, &cubin, &size, &log, res);
    free(ptx);
    if (rc != CG_OK) return rc;
    rc = load_image(req, cubin, out, log, res);
    if (rc != CG_OK) {
        free(cubin);
        return rc;
    }
    out->native = cubin;
    out->native_size = size;
    return CG_OK;
}

static int cu_load_native(const cg_load_request *req, const void *bin, size_t n, const char *flags, lb_loaded *out,
                          cg_load_result *res)
{
    (void)n, (void)flags;
    return load_image(req, bin, out, strdup(""), res);
}

static int cu_native_of(const cg_load_request *req, const lb_loaded *l, void **bin, size_t *n)
{
    (void)req, (void)l, (void)bin, (void)n;
    return CG_ENOENT; /* the cubin comes from the build (lb_loaded.native) */
}

/* Triton's opt-in: above 48 KiB of dynamic shared memory, the function may
 * use the device's opt-in maximum less its static shared memory. */
static int cu_prepare(const cg_load_request *req, const lb_loaded *l, cg_load_result *res)
{
    if (req->shared_mem <= 49152) return CG_OK;
    CUdevice dev;
    CUresult r = cu.cuCtxGetDevice(&dev);
    int optin = 0, stat = 0;
    if (r == CUDA_SUCCESS)
        r = cu.cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    if (r != CUDA_SUCCESS)
        return CU_FAIL(res, "cuDeviceGetAttribute", r, "cuDeviceGetAttribute failed (error %d)", (int)r);
    if (req->shared_mem > (size_t)optin)
        return lb_fail(res, CG_LOAD_ERESOURCES, NULL, 0,
                       "out of resource: shared memory, Required: %zu, Hardware limit: %d", req->shared_mem, optin);
    if (optin <= 49152) return CG_OK;
    cu.cuFuncSetCacheConfig(l->kernel, CU_FUNC_CACHE_PREFER_SHARED);
    if ((r = cu.cuFuncGetAttribute(&stat, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, l->kernel)) != CUDA_SUCCESS ||
        (r = cu.cuFuncSetAttribute(l->kernel, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - stat)) !=
            CUDA_SUCCESS)
        return CU_FAIL(res, "cuFuncSetAttribute", r, "the dynamic shared memory opt-in failed (error %d)", (int)r);
    return CG_OK;
}

static int cu_cacheable(const cg_load_request *req) { return req->format == CG_LOAD_FORMAT_IL; }

const lb_backend lb_backend_cuda = {.name = "cuda",
                                    .init = cu_init,
                                    .identity = cu_identity,
                                    .build = cu_build,
                                    .load_native = cu_load_native,
                                    .native_of = cu_native_of,
                                    .prepare = cu_prepare,
                                    .destroy = cu_destroy,
                                    .cacheable = cu_cacheable};
