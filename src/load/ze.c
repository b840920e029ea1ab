/* Level Zero, as Triton's Intel backend loads a kernel: zeModuleCreate from
 * SPIR-V or a native binary with build flags, the build log read and always
 * destroyed, the kernel name checked against the module's, zeKernelCreate
 * and zeKernelGetProperties; registers from the GRF mode in the flags;
 * spills in CUDA's units; one retry with the large register file when the
 * first SPIR-V build fails or spills too much, keeping the better module and
 * destroying the other. Partial objects are destroyed on every failure. */
#define _GNU_SOURCE
#include "internal.h"

#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_GRF "-cl-intel-256-GRF-per-thread"
#define DEFAULT_MAX_SPILLS 8 /* Triton's 1000 bytes of spill memory at SIMD 32, in 4-byte registers */

#define ZE_FUNCS(X)                                                                                                    \
    X(zeModuleCreate)                                                                                                  \
    X(zeModuleDestroy)                                                                                                 \
    X(zeModuleBuildLogGetString)                                                                                       \
    X(zeModuleBuildLogDestroy)                                                                                         \
    X(zeModuleGetKernelNames)                                                                                          \
    X(zeModuleGetNativeBinary)                                                                                         \
    X(zeKernelCreate)                                                                                                  \
    X(zeKernelDestroy)                                                                                                 \
    X(zeKernelGetProperties)                                                                                           \
    X(zeDriverGet)                                                                                                     \
    X(zeDriverGetProperties)                                                                                           \
    X(zeDeviceGet)                                                                                                     \
    X(zeDeviceGetProperties)                                                                                           \
    X(zeDeviceGetComputeProperties)                                                                                    \
    X(zeDeviceGetModuleProperties)

static struct {
#define FIELD(name) __typeof__(name) *name;
    ZE_FUNCS(FIELD)
#undef FIELD
} ze;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *missing;
static void *lib;

static void resolve(void)
{
#define RESOLVE(name)                                                                                                  \
    if (!(ze.name = (__typeof__(name) *)lb_resolve("libze_loader.so.1", &lib, #name)) && !missing) missing = #name;
    ZE_FUNCS(RESOLVE)
#undef RESOLVE
}

static int ze_init(cg_load_result *res)
{
    pthread_once(&once, resolve);
    if (missing)
        return lb_fail(res, CG_ENOENT, NULL, 0,
                       "Level Zero: %s is not in the process nor in libze_loader.so.1 (is the loader installed?)",
                       missing);
    return CG_OK;
}

static int grf_regs(const char *flags)
{
    if (lb_has_flag(flags, LARGE_GRF) || lb_has_flag(flags, "-ze-opt-large-register-file")) return 256;
    if (lb_has_flag(flags, "-cl-intel-128-GRF-per-thread")) return 128;
    return 0;
}

static int grf_specified(const char *flags)
{
    return grf_regs(flags) != 0 || lb_has_flag(flags, "-cl-intel-enable-auto-large-GRF-mode");
}

/* ---- identity: device, driver, compiler ---- */

struct device_id {
    ze_device_handle_t dev;
    char *text;
};
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static struct device_id ids[64];
static size_t nids;

static void hexadd(lb_str *s, const char *label, const uint8_t *p, size_t n)
{
    char hex[2 * 64 + 1];
    lb_hex(p, n < 64 ? n : 64, hex);
    lb_str_add(s, "%s=%s\n", label, hex);
}

static int device_identity(ze_device_handle_t dev, lb_str *out, cg_load_result *res)
{
    ze_device_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    ze_result_t r = ze.zeDeviceGetProperties(dev, &dp);
    if (r != ZE_RESULT_SUCCESS)
        return lb_fail(res, CG_LOAD_EDRIVER, "zeDeviceGetProperties", (long)r, "zeDeviceGetProperties failed");
    ze_device_module_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES};
    r = ze.zeDeviceGetModuleProperties(dev, &mp);
    if (r != ZE_RESULT_SUCCESS)
        return lb_fail(res, CG_LOAD_EDRIVER, "zeDeviceGetModuleProperties", (long)r,
                       "zeDeviceGetModuleProperties failed");
    hexadd(out, "device", dp.uuid.id, sizeof dp.uuid.id);
    lb_str_add(out, "device_name=%s\ndevice_id=0x%x\n", dp.name, dp.deviceId);
    hexadd(out, "native_kernel", mp.nativeKernelSupported.id, sizeof mp.nativeKernelSupported.id);
    /* The driver that owns the device: its UUID and version. driverVersion
     * keeps only 16 bits of the build, and IGC is upgraded apart from the
     * driver: the files of the driver and its compiler go in too. */
    uint32_t nd = 0;
    if (ze.zeDriverGet(&nd, NULL) == ZE_RESULT_SUCCESS && nd) {
        ze_driver_handle_t drivers[16];
        if (nd > 16) nd = 16;
        if (ze.zeDriverGet(&nd, drivers) == ZE_RESULT_SUCCESS)
            for (uint32_t i = 0; i < nd; i++) {
                uint32_t nv = 0;
                if (ze.zeDeviceGet(drivers[i], &nv, NULL) != ZE_RESULT_SUCCESS || nv == 0) continue;
                ze_device_handle_t *devs = calloc(nv, sizeof *devs);
                int mine = 0;
                if (devs && ze.zeDeviceGet(drivers[i], &nv, devs) == ZE_RESULT_SUCCESS)
                    for (uint32_t j = 0; j < nv; j++)
                        mine |= devs[j] == dev;
                free(devs);
                if (!mine) continue;
                ze_driver_properties_t drp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
                if (ze.zeDriverGetProperties(drivers[i], &drp) == ZE_RESULT_SUCCESS) {
                    hexadd(out, "driver", drp.uuid.id, sizeof drp.uuid.id);
                    lb_str_add(out, "driver_version=0x%x\n", drp.driverVersion);
                }
                break;
            }
    }
    /* The drivers' own files by their names up to ".so": the simulator's
     * compiler (libze_cgsim_compiler.so), which it opens at its first
     * compile as NEO opens IGC, is a compiler looked for beside it. */
    static const char *const drivers[] = {"libze_intel_gpu.so", "libze_cgsim.so", NULL};
    static const char *const compilers[] = {
        "libigc.so.1", "libigc.so.2", "libigdfcl.so.1", "libigdfcl.so.2", "libze_cgsim_compiler.so", NULL};
    lb_str_add(out, "compiler=");
    lb_objects_identity(out, drivers, compilers);
    lb_str_add(out, "\n");
    return CG_OK;
}

static int ze_identity(const cg_load_request *req, lb_str *key, lb_str *memkey, cg_load_result *res)
{
    ze_device_handle_t dev = req->device;
    pthread_mutex_lock(&ids_lock);
    for (size_t i = 0; i < nids; i++)
        if (ids[i].dev == dev) {
            lb_str_add(key, "%s", ids[i].text);
            pthread_mutex_unlock(&ids_lock);
            lb_str_add(memkey, "context=%p\ndevice=%p\n", req->context, req->device);
            return CG_OK;
        }
    pthread_mutex_unlock(&ids_lock);
    lb_str id = {0};
    int rc = device_identity(dev, &id, res);
    if (rc != CG_OK || id.oom) {
        free(id.p);
        return rc != CG_OK ? rc : lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    }
    lb_str_add(key, "%s", id.p);
    pthread_mutex_lock(&ids_lock);
    if (nids < sizeof ids / sizeof *ids) {
        ids[nids].dev = dev;
        ids[nids].text = id.p;
        nids++;
        id.p = NULL;
    }
    pthread_mutex_unlock(&ids_lock);
    free(id.p);
    lb_str_add(memkey, "context=%p\ndevice=%p\n", req->context, req->device);
    return CG_OK;
}

/* ---- building ---- */

static void ze_destroy(void *module, void *kernel)
{
    if (kernel) ze.zeKernelDestroy(kernel);
    if (module) ze.zeModuleDestroy(module);
}

static char *read_log(ze_module_build_log_handle_t log)
{
    size_t n = 0;
    char *s = NULL;
    if (log && ze.zeModuleBuildLogGetString(log, &n, NULL) == ZE_RESULT_SUCCESS && n > 0 && (s = malloc(n + 1))) {
        if (ze.zeModuleBuildLogGetString(log, &n, s) != ZE_RESULT_SUCCESS) n = 0;
        s[n] = '\0';
    }
    if (log) ze.zeModuleBuildLogDestroy(log); /* always: Triton's backend leaked it */
    return s ? s : strdup("");
}

static int out_of_resources(ze_result_t r) { return r == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY; }

/* Whether the module has the kernel; names gets the module's kernel names,
 * for an error that lists them. */
static int module_has_kernel(ze_module_handle_t mod, const char *kernel, lb_str *names)
{
    uint32_t count = 0;
    int found = 0;
    if (ze.zeModuleGetKernelNames(mod, &count, NULL) == ZE_RESULT_SUCCESS && count) {
        const char **list = calloc(count, sizeof *list);
        if (list && ze.zeModuleGetKernelNames(mod, &count, list) == ZE_RESULT_SUCCESS)
            for (uint32_t i = 0; i < count; i++) {
                found |= strcmp(list[i], kernel) == 0;
                lb_str_add(names, "%s%s", i ? ", " : "", list[i]);
            }
        free(list);
    }
    return found;
}

/* The kernel's figures on the device into out; ZE_RESULT_SUCCESS or the failing query's result. */
static ze_result_t kernel_figures(const cg_load_request *req, ze_kernel_handle_t k, const char *flags, lb_loaded *out)
{
    ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    ze_device_compute_properties_t cp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
    ze_result_t r;
    if ((r = ze.zeKernelGetProperties(k, &kp)) != ZE_RESULT_SUCCESS ||
        (r = ze.zeDeviceGetComputeProperties(req->device, &cp)) != ZE_RESULT_SUCCESS)
        return r;
    uint32_t simd = kp.requiredSubgroupSize ? kp.requiredSubgroupSize : kp.maxSubgroupSize;
    *out = (lb_loaded){.n_regs = grf_regs(flags),
                       .n_spills = simd ? (int)(kp.spillMemSize / (4u * simd)) : -1,
                       .max_threads = (int)cp.maxTotalGroupSize,
                       .simd_width = simd ? (int)simd : -1,
                       .spill_bytes = kp.spillMemSize,
                       .private_bytes = kp.privateMemSize,
                       .local_bytes = kp.localMemSize};
    return ZE_RESULT_SUCCESS;
}

/* One module and kernel. On failure nothing stays alive, and res holds the
 * failing call and, for zeModuleCreate, the build log. */
static int compile(const cg_load_request *req, ze_module_format_t format, const void *bytes, size_t size,
                   const char *flags, lb_loaded *out, cg_load_result *res)
{
    ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                             .format = format,
                             .inputSize = size,
                             .pInputModule = bytes,
                             .pBuildFlags = flags};
    ze_module_handle_t mod = NULL;
    ze_module_build_log_handle_t log = NULL;
    ze_result_t r = ze.zeModuleCreate(req->context, req->device, &desc, &mod, &log);
    char *text = read_log(log);
    if (r != ZE_RESULT_SUCCESS) {
        if (mod) ze.zeModuleDestroy(mod);
        lb_keep_log(res, text);
        return lb_fail(res, out_of_resources(r) ? CG_LOAD_ERESOURCES : CG_LOAD_EDRIVER, "zeModuleCreate", (long)r,
                       "zeModuleCreate failed (result 0x%x) with flags '%s'", (unsigned)r, flags);
    }
    lb_str names = {0};
    if (!module_has_kernel(mod, req->kernel_name, &names)) {
        lb_keep_log(res, text);
        ze.zeModuleDestroy(mod);
        int rc = lb_fail(res, CG_ENOENT, "zeModuleGetKernelNames", 0, "kernel '%s' is not in the module; it has: %s",
                         req->kernel_name, names.p ? names.p : "none");
        free(names.p);
        return rc;
    }
    free(names.p);
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = req->kernel_name};
    ze_kernel_handle_t k = NULL;
    if ((r = ze.zeKernelCreate(mod, &kd, &k)) != ZE_RESULT_SUCCESS) {
        lb_keep_log(res, text);
        ze.zeModuleDestroy(mod);
        return lb_fail(res, out_of_resources(r) ? CG_LOAD_ERESOURCES : CG_LOAD_EDRIVER, "zeKernelCreate", (long)r,
                       "zeKernelCreate('%s') failed (result 0x%x)", req->kernel_name, (unsigned)r);
    }
    lb_loaded l;
    if ((r = kernel_figures(req, k, flags, &l)) != ZE_RESULT_SUCCESS) {
        lb_keep_log(res, text);
        ze_destroy(mod, k);
        return lb_fail(res, CG_LOAD_EDRIVER, "zeKernelGetProperties", (long)r,
                       "zeKernelGetProperties or zeDeviceGetComputeProperties failed (result 0x%x)", (unsigned)r);
    }
    char *f = strdup(flags);
    if (!f) {
        free(text);
        ze_destroy(mod, k);
        return lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    }
    l.module = mod, l.kernel = k, l.flags = f, l.log = text;
    *out = l;
    return CG_OK;
}

static void loaded_drop(lb_loaded *l)
{
    ze_destroy(l->module, l->kernel);
    free(l->flags);
    free(l->log);
    *l = (lb_loaded){0};
}

static int ze_build(const cg_load_request *req, lb_loaded *out, cg_load_result *res)
{
    const char *flags = req->build_flags ? req->build_flags : "";
    ze_module_format_t fmt = req->format == CG_LOAD_FORMAT_NATIVE ? ZE_MODULE_FORMAT_NATIVE : ZE_MODULE_FORMAT_IL_SPIRV;
    lb_loaded first = {0};
    lb_stat_add(&lb_stats.builds);
    int rc = compile(req, fmt, req->bytes, req->size, flags, &first, res);
    if (rc == CG_ENOENT || rc == CG_ENOMEM || fmt != ZE_MODULE_FORMAT_IL_SPIRV || (req->flags & CG_LOAD_NO_RETRY) ||
        grf_specified(flags)) {
        *out = first;
        return rc;
    }
    int limit = req->max_spills ? req->max_spills : DEFAULT_MAX_SPILLS;
    int spills_too_much = rc == CG_OK && req->max_spills >= 0 && first.n_spills > limit;
    if (rc == CG_OK && !spills_too_much) {
        *out = first;
        return CG_OK;
    }
    /* The retry: the first build failed, or spilled more than the limit. */
    lb_stat_add(&lb_stats.retries);
    lb_str f2 = {0};
    lb_str_add(&f2, "%s%s%s", flags, *flags ? " " : "", LARGE_GRF);
    char *flags2 = lb_str_take(&f2);
    if (!flags2) {
        *out = first;
        return rc;
    }
    lb_loaded second = {0};
    cg_load_result scratch = {0};
    lb_stat_add(&lb_stats.builds);
    int rc2 = compile(req, fmt, req->bytes, req->size, flags2, &second, rc == CG_OK ? &scratch : res);
    free(flags2);
    free(scratch.message);
    free(scratch.build_log);
    if (rc != CG_OK) { /* the first failed: the retry's outcome is the answer */
        second.retried = 1;
        if (rc2 == CG_OK) {
            free(res->message);
            free(res->build_log);
            res->message = NULL;
            res->build_log = NULL;
            res->failed_call = NULL;
            res->api_result = 0;
            res->out_of_resources = 0;
        }
        res->retried = 1;
        *out = second;
        return rc2;
    }
    if (rc2 == CG_OK && second.n_spills < first.n_spills) {
        loaded_drop(&first);
        *out = second;
    } else {
        if (rc2 == CG_OK) loaded_drop(&second);
        *out = first;
    }
    out->retried = 1;
    return CG_OK;
}

static int ze_load_native(const cg_load_request *req, const void *bin, size_t n, const char *flags, lb_loaded *out,
                          cg_load_result *res)
{
    return compile(req, ZE_MODULE_FORMAT_NATIVE, bin, n, flags, out, res);
}

static int ze_native_of(const cg_load_request *req, const lb_loaded *l, void **bin, size_t *n)
{
    (void)req;
    size_t size = 0;
    if (ze.zeModuleGetNativeBinary(l->module, &size, NULL) != ZE_RESULT_SUCCESS || size == 0) return CG_ENOENT;
    uint8_t *p = malloc(size);
    if (!p) return CG_ENOMEM;
    if (ze.zeModuleGetNativeBinary(l->module, &size, p) != ZE_RESULT_SUCCESS) {
        free(p);
        return CG_ENOENT;
    }
    *bin = p;
    *n = size;
    return CG_OK;
}

static int ze_cacheable(const cg_load_request *req) { return req->format == CG_LOAD_FORMAT_IL; }

const lb_backend lb_backend_ze = {.name = "ze",
                                  .init = ze_init,
                                  .identity = ze_identity,
                                  .build = ze_build,
                                  .load_native = ze_load_native,
                                  .native_of = ze_native_of,
                                  .prepare = NULL,
                                  .destroy = ze_destroy,
                                  .cacheable = ze_cacheable};
