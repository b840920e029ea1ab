/* OpenCL: clCreateProgramWithIL (SPIR-V), WithBinary (a program binary) or
 * WithSource (OpenCL C), clBuildProgram for the one device, the build log
 * (always read), clCreateKernel with the name checked against
 * CL_PROGRAM_KERNEL_NAMES, and the CL_KERNEL_* work-group and memory
 * figures. OpenCL has no register or spill query: those are -1. The disk
 * cache keeps CL_PROGRAM_BINARIES of the device, loaded with
 * clCreateProgramWithBinary and built with the same options. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include "internal.h"

#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_DEVICE_UUID_KHR
#define CL_DEVICE_UUID_KHR 0x106A
#define CL_DRIVER_UUID_KHR 0x106B
#endif

#define CL_FUNCS(X)                                                                                                    \
    X(clCreateProgramWithIL)                                                                                           \
    X(clCreateProgramWithBinary)                                                                                       \
    X(clCreateProgramWithSource)                                                                                       \
    X(clBuildProgram)                                                                                                  \
    X(clGetProgramBuildInfo)                                                                                           \
    X(clGetProgramInfo)                                                                                                \
    X(clCreateKernel)                                                                                                  \
    X(clGetKernelWorkGroupInfo)                                                                                        \
    X(clReleaseKernel)                                                                                                 \
    X(clReleaseProgram)                                                                                                \
    X(clGetDeviceInfo)                                                                                                 \
    X(clGetPlatformInfo)

static struct {
#define FIELD(name) __typeof__(name) *name;
    CL_FUNCS(FIELD)
#undef FIELD
} cl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *missing;
static void *lib;

static void resolve(void)
{
#define RESOLVE(name)                                                                                                  \
    if (!(cl.name = (__typeof__(name) *)lb_resolve("libOpenCL.so.1", &lib, #name)) && !missing) missing = #name;
    CL_FUNCS(RESOLVE)
#undef RESOLVE
}

static int cl_init(cg_load_result *res)
{
    pthread_once(&once, resolve);
    if (missing)
        return lb_fail(res, CG_ENOENT, NULL, 0,
                       "OpenCL: %s is not in the process nor in libOpenCL.so.1 (is an ICD loader installed?)", missing);
    return CG_OK;
}

static void add_device_string(lb_str *s, cl_device_id dev, cl_device_info what, const char *label)
{
    char buf[1024];
    size_t n = 0;
    if (cl.clGetDeviceInfo(dev, what, sizeof buf - 1, buf, &n) != CL_SUCCESS) return;
    buf[n < sizeof buf ? n : sizeof buf - 1] = '\0';
    lb_str_add(s, "%s=%s\n", label, buf);
}

static int cl_identity(const cg_load_request *req, lb_str *key, lb_str *memkey, cg_load_result *res)
{
    (void)res;
    cl_device_id dev = req->device;
    add_device_string(key, dev, CL_DEVICE_NAME, "device_name");
    add_device_string(key, dev, CL_DEVICE_VENDOR, "device_vendor");
    add_device_string(key, dev, CL_DEVICE_VERSION, "device_version");
    add_device_string(key, dev, CL_DRIVER_VERSION, "driver_version");
    uint8_t uuid[16];
    char hex[33];
    if (cl.clGetDeviceInfo(dev, CL_DEVICE_UUID_KHR, sizeof uuid, uuid, NULL) == CL_SUCCESS) {
        lb_hex(uuid, 16, hex);
        lb_str_add(key, "device=%s\n", hex);
    }
    if (cl.clGetDeviceInfo(dev, CL_DRIVER_UUID_KHR, sizeof uuid, uuid, NULL) == CL_SUCCESS) {
        lb_hex(uuid, 16, hex);
        lb_str_add(key, "driver=%s\n", hex);
    }
    cl_platform_id platform = NULL;
    if (cl.clGetDeviceInfo(dev, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL) == CL_SUCCESS) {
        char buf[1024];
        size_t n = 0;
        if (cl.clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof buf - 1, buf, &n) == CL_SUCCESS) {
            buf[n < sizeof buf ? n : sizeof buf - 1] = '\0';
            lb_str_add(key, "platform_version=%s\n", buf); /* PoCL's names its LLVM */
        }
    }
    static const char *const icds[] = {"libpocl", "libintelocl", "libigdrcl", NULL};
    static const char *const compilers[] = {"libigc.so.1", "libigc.so.2", "libigdfcl.so.1", "libigdfcl.so.2", NULL};
    lb_str_add(key, "compiler=");
    lb_objects_identity(key, icds, compilers);
    lb_str_add(key, "\n");
    lb_str_add(memkey, "context=%p\ndevice=%p\n", req->context, req->device);
    return CG_OK;
}

static void cl_destroy(void *program, void *kernel)
{
    if (kernel) cl.clReleaseKernel(kernel);
    if (program) cl.clReleaseProgram(program);
}

static char *build_log(cl_program p, cl_device_id dev)
{
    size_t n = 0;
    char *s = NULL;
    if (cl.clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) == CL_SUCCESS && n && (s = malloc(n + 1))) {
        if (cl.clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, s, NULL) != CL_SUCCESS) n = 0;
        s[n] = '\0';
    }
    return s ? s : strdup("");
}

static int resources(cl_int e) { return e == CL_OUT_OF_RESOURCES; }

/* The program from IL, a native binary or source; on failure nothing stays alive. */
static int cl_create(const cg_load_request *req, cg_load_format fmt, const void *bytes, size_t size, cl_program *out,
                     cg_load_result *res)
{
    cl_context ctx = req->context;
    cl_device_id dev = req->device;
    cl_int err = CL_SUCCESS, status = CL_SUCCESS;
    cl_program p = NULL;
    const char *call;
    if (fmt == CG_LOAD_FORMAT_IL) {
        call = "clCreateProgramWithIL";
        p = cl.clCreateProgramWithIL(ctx, bytes, size, &err);
    } else if (fmt == CG_LOAD_FORMAT_NATIVE) {
        call = "clCreateProgramWithBinary";
        const unsigned char *bin = bytes;
        p = cl.clCreateProgramWithBinary(ctx, 1, &dev, &size, &bin, &status, &err);
        if (err == CL_SUCCESS && status != CL_SUCCESS) err = status;
    } else {
        call = "clCreateProgramWithSource";
        const char *text = bytes;
        p = cl.clCreateProgramWithSource(ctx, 1, &text, &size, &err);
    }
    if (err != CL_SUCCESS || !p) {
        if (p) cl.clReleaseProgram(p);
        return lb_fail(res, resources(err) ? CG_LOAD_ERESOURCES : CG_LOAD_EDRIVER, call, (long)err,
                       "%s failed (error %d)", call, (int)err);
    }
    *out = p;
    return CG_OK;
}

/* clCreateKernel failed with err: the program is released, and the error
 * lists the program's kernels when the name is not among them. */
static int cl_no_kernel(const cg_load_request *req, cl_program p, cl_int err, cg_load_result *res)
{
    char names[1024] = "";
    cl.clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names - 1, names, NULL);
    names[sizeof names - 1] = '\0';
    cl.clReleaseProgram(p);
    if (err == CL_INVALID_KERNEL_NAME)
        return lb_fail(res, CG_ENOENT, "clCreateKernel", (long)err, "kernel '%s' is not in the program; it has: %s",
                       req->kernel_name, names[0] ? names : "none");
    return lb_fail(res, resources(err) ? CG_LOAD_ERESOURCES : CG_LOAD_EDRIVER, "clCreateKernel", (long)err,
                   "clCreateKernel('%s') failed (error %d)", req->kernel_name, (int)err);
}

/* The kernel's figures on the device into out; CL_SUCCESS or the failing query's error. */
static cl_int cl_kernel_figures(cl_kernel k, cl_device_id dev, lb_loaded *out)
{
    size_t wg = 0, multiple = 0;
    cl_ulong local = 0, priv = 0;
    cl_int err;
    if ((err = cl.clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL)) != CL_SUCCESS ||
        (err = cl.clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, NULL)) !=
            CL_SUCCESS ||
        (err = cl.clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv, NULL)) !=
            CL_SUCCESS ||
        (err = cl.clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof multiple,
                                           &multiple, NULL)) != CL_SUCCESS)
        return err;
    *out = (lb_loaded){.n_regs = -1,
                       .n_spills = -1,
                       .max_threads = wg > 0x7fffffff ? 0x7fffffff : (int)wg,
                       .simd_width = (int)multiple,
                       .spill_bytes = -1,
                       .private_bytes = (long long)priv,
                       .local_bytes = (long long)local};
    return CL_SUCCESS;
}

/* One program, built, and its kernel. On failure nothing stays alive, and
 * res holds the failing call and, once the build ran, its log. */
static int cl_make(const cg_load_request *req, cg_load_format fmt, const void *bytes, size_t size, const char *flags,
                   lb_loaded *out, cg_load_result *res)
{
    cl_device_id dev = req->device;
    cl_program p = NULL;
    int rc = cl_create(req, fmt, bytes, size, &p, res);
    if (rc != CG_OK) return rc;
    cl_int err = cl.clBuildProgram(p, 1, &dev, flags, NULL, NULL);
    char *log = build_log(p, dev);
    if (err != CL_SUCCESS) {
        cl.clReleaseProgram(p);
        lb_keep_log(res, log);
        return lb_fail(res, resources(err) ? CG_LOAD_ERESOURCES : CG_LOAD_EDRIVER, "clBuildProgram", (long)err,
                       "clBuildProgram failed (error %d) with options '%s'", (int)err, flags);
    }
    cl_kernel k = cl.clCreateKernel(p, req->kernel_name, &err);
    if (err != CL_SUCCESS || !k) {
        lb_keep_log(res, log);
        return cl_no_kernel(req, p, err, res);
    }
    lb_loaded l;
    if ((err = cl_kernel_figures(k, dev, &l)) != CL_SUCCESS) {
        cl_destroy(p, k);
        lb_keep_log(res, log);
        return lb_fail(res, CG_LOAD_EDRIVER, "clGetKernelWorkGroupInfo", (long)err,
                       "clGetKernelWorkGroupInfo failed (error %d)", (int)err);
    }
    char *f = strdup(flags);
    if (!f) {
        free(log);
        cl_destroy(p, k);
        return lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    }
    l.module = p, l.kernel = k, l.flags = f, l.log = log;
    *out = l;
    return CG_OK;
}

static int cl_build(const cg_load_request *req, lb_loaded *out, cg_load_result *res)
{
    lb_stat_add(&lb_stats.builds);
    return cl_make(req, req->format, req->bytes, req->size, req->build_flags ? req->build_flags : "", out, res);
}

static int cl_load_native(const cg_load_request *req, const void *bin, size_t n, const char *flags, lb_loaded *out,
                          cg_load_result *res)
{
    return cl_make(req, CG_LOAD_FORMAT_NATIVE, bin, n, flags, out, res);
}

/* The binary of the request's device among the program's devices. */
static int cl_native_of(const cg_load_request *req, const lb_loaded *l, void **bin, size_t *n)
{
    cl_uint ndev = 0;
    if (cl.clGetProgramInfo(l->module, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, NULL) != CL_SUCCESS || !ndev ||
        ndev > 64)
        return CG_ENOENT;
    cl_device_id devs[64];
    size_t sizes[64];
    unsigned char *bins[64] = {0};
    if (cl.clGetProgramInfo(l->module, CL_PROGRAM_DEVICES, ndev * sizeof *devs, devs, NULL) != CL_SUCCESS ||
        cl.clGetProgramInfo(l->module, CL_PROGRAM_BINARY_SIZES, ndev * sizeof *sizes, sizes, NULL) != CL_SUCCESS)
        return CG_ENOENT;
    cl_uint mine = ndev;
    for (cl_uint i = 0; i < ndev; i++)
        if (devs[i] == (cl_device_id)req->device) mine = i;
    if (mine == ndev || sizes[mine] == 0) return CG_ENOENT;
    if (!(bins[mine] = malloc(sizes[mine]))) return CG_ENOMEM;
    if (cl.clGetProgramInfo(l->module, CL_PROGRAM_BINARIES, ndev * sizeof *bins, bins, NULL) != CL_SUCCESS) {
        free(bins[mine]);
        return CG_ENOENT;
    }
    *bin = bins[mine];
    *n = sizes[mine];
    return CG_OK;
}

static int cl_cacheable(const cg_load_request *req) { return req->format != CG_LOAD_FORMAT_NATIVE; }

const lb_backend lb_backend_cl = {.name = "cl",
                                  .init = cl_init,
                                  .identity = cl_identity,
                                  .build = cl_build,
                                  .load_native = cl_load_native,
                                  .native_of = cl_native_of,
                                  .prepare = NULL,
                                  .destroy = cl_destroy,
                                  .cacheable = cl_cacheable};
