/* cg_load_binary on OpenCL (PoCL through ocl-icd, linked through
 * libcallguard_cl.so): THREADS threads load KERNELS distinct kernels from
 * OpenCL C source, then the figures are printed as key=value.
 *
 * Usage: load_worker_cl MODE THREADS KERNELS
 *   source    kernel i from source "k<i>"
 *   binary    kernel 0 built once from source without the cache, its
 *             CL_PROGRAM_BINARIES then loaded as CG_LOAD_FORMAT_NATIVE
 *   badsource source that does not compile (the build log comes back)
 *   badname   a kernel name the program lacks
 *   il        kernel i from the SPIR-V file $CG_LOAD_SPIRV_DIR/k<i>.spv
 *             (clCreateProgramWithIL: Intel's CPU runtime, PoCL refuses it)
 *   sameil    every thread loads k0.spv at once
 *   badil     bytes that are no SPIR-V given as IL
 *   badflags  k0.spv with a build option the runtime does not know
 * The runtime is the first platform: OCL_ICD_VENDORS chooses it. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include "callguard/load.h"

#include <CL/cl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cl_context ctx;
static cl_device_id dev;
static const char *mode;
static int nkernels;
static atomic_int next, loaded, failed, from_disk, from_memory;

/* The whole file, or NULL. */
static char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (size_t got;; n += got) {
        if (n == cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 65536))) break;
        if ((got = fread(buf + n, 1, cap - n, f)) == 0) break;
    }
    fclose(f);
    *size = n;
    return buf;
}

/* Runs the kernel of k<i>.spv (a[j] = j * (i + 1) + 7) on 64 items: 1 when
 * every item is right (the module Intel's runtime made from SPIR-V runs). */
static int run_kernel(cl_kernel k, int i)
{
    cl_int err, a[64];
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    if (err != CL_SUCCESS) return 0;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof a, NULL, &err);
    size_t global = 64;
    int ok = err == CL_SUCCESS && clSetKernelArg(k, 0, sizeof buf, &buf) == CL_SUCCESS &&
             clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) == CL_SUCCESS &&
             clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof a, a, 0, NULL, NULL) == CL_SUCCESS;
    for (int j = 0; ok && j < 64; j++)
        ok = a[j] == j * (i + 1) + 7;
    if (buf) clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
    return ok;
}

/* What one request loads: source, or IL when il is set. */
typedef struct kernel_input {
    char src[256], name[32];
    char *il; /* malloc'd */
    size_t il_size;
} kernel_input;

/* Kernel i's input as the mode says; -1, said, when its SPIR-V file cannot be read. */
static int kernel_input_make(int i, kernel_input *k)
{
    snprintf(k->name, sizeof k->name, "k%d", i);
    snprintf(k->src, sizeof k->src, "__kernel void k%d(__global int *a) { a[get_global_id(0)] += %d; }\n", i, i);
    if (strcmp(mode, "badsource") == 0)
        snprintf(k->src, sizeof k->src, "__kernel void k%d(__global int *a) { a[0] = ; }\n", i);
    if (strcmp(mode, "badname") == 0) snprintf(k->name, sizeof k->name, "missing");
    k->il = NULL;
    k->il_size = 0;
    if (strcmp(mode, "il") == 0 || strcmp(mode, "sameil") == 0 || strcmp(mode, "badflags") == 0) {
        char path[1024];
        const char *dir = getenv("CG_LOAD_SPIRV_DIR");
        int which = strcmp(mode, "il") == 0 ? i : 0;
        snprintf(k->name, sizeof k->name, "k%d", which);
        snprintf(path, sizeof path, "%s/k%d.spv", dir ? dir : ".", which);
        if (!(k->il = slurp(path, &k->il_size))) {
            printf("error=cannot read %s\n", path);
            return -1;
        }
    } else if (strcmp(mode, "badil") == 0) {
        k->il = strdup("this is no SPIR-V module, only text that pretends to be one");
        k->il_size = strlen(k->il);
    }
    return 0;
}

static cg_load_request request_of(const kernel_input *k)
{
    cg_load_request req = {.api = CG_LOAD_API_CL,
                           .context = ctx,
                           .device = dev,
                           .bytes = k->src,
                           .size = strlen(k->src),
                           .format = CG_LOAD_FORMAT_SOURCE,
                           .kernel_name = k->name,
                           .build_flags = "-cl-std=CL1.2"};
    if (k->il) {
        req.bytes = k->il;
        req.size = k->il_size;
        req.format = CG_LOAD_FORMAT_IL;
        req.build_flags = strcmp(mode, "badflags") == 0 ? "-cl-no-such-option" : "-cl-mad-enable";
    }
    return req;
}

/* The program's binary, loaded as native input in place of *r. */
static int load_as_native(cg_load_request *req, cg_load_result **r)
{
    size_t size = 0;
    unsigned char *bin;
    clGetProgramInfo((*r)->module, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    bin = malloc(size);
    clGetProgramInfo((*r)->module, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
    cg_load_result_free(*r);
    req->bytes = bin;
    req->size = size;
    req->format = CG_LOAD_FORMAT_NATIVE;
    int rc = cg_load_binary(req, r);
    free(bin);
    return rc;
}

static void print_failure(int rc, cg_load_result *r)
{
    atomic_fetch_add(&failed, 1);
    printf("error=%s call=%s result=%ld message=%s\n", cg_load_status_name(rc),
           r && r->failed_call ? r->failed_call : "-", r ? r->api_result : 0, r ? r->message : "-");
    printf("error_log_bytes=%zu\n", r ? strlen(r->build_log) : 0);
    if (r && r->build_log[0]) printf("error_log=%s\n", strtok(r->build_log, "\n"));
}

/* Counts the load; kernel 0's figures and log are printed, and with
 * CG_LOAD_RUN whether it ran. */
static void print_loaded(cg_load_result *r, int i)
{
    atomic_fetch_add(&loaded, 1);
    if (r->source == CG_LOAD_SOURCE_DISK) atomic_fetch_add(&from_disk, 1);
    if (r->source == CG_LOAD_SOURCE_MEMORY) atomic_fetch_add(&from_memory, 1);
    cl_uint nargs = 0;
    clGetKernelInfo(r->kernel, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL);
    if (i != 0) return;
    printf("regs=%d spills=%d max_threads=%d simd=%d local=%lld private=%lld nargs=%u flags=%s\n", r->n_regs,
           r->n_spills, r->max_threads, r->simd_width, r->local_bytes, r->private_bytes, nargs, r->build_flags);
    size_t n = strlen(r->build_log);
    printf("log_bytes=%zu\n", n);
    if (n) printf("log=%s\n", strtok(r->build_log, "\n"));
    /* the kernel runs: a[j] += i for 64 items, read back */
    if (getenv("CG_LOAD_RUN")) printf("ran=%d\n", run_kernel(r->kernel, i));
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i; (i = atomic_fetch_add(&next, 1)) < nkernels;) {
        kernel_input k;
        if (kernel_input_make(i, &k) != 0) {
            atomic_fetch_add(&failed, 1);
            continue;
        }
        cg_load_request req = request_of(&k);
        cg_load_result *r = NULL;
        int rc = cg_load_binary(&req, &r);
        free(k.il);
        if (rc == CG_OK && strcmp(mode, "binary") == 0) rc = load_as_native(&req, &r);
        if (rc != CG_OK)
            print_failure(rc, r);
        else
            print_loaded(r, i);
        cg_load_result_free(r);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: load_worker_cl MODE THREADS KERNELS\n");
        return 2;
    }
    mode = argv[1];
    int nthreads = atoi(argv[2]);
    nkernels = atoi(argv[3]);
    if (nthreads < 1 || nthreads > 64 || nkernels < 1) return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    cl_platform_id platform;
    cl_int err;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return 3;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) return 3;
    pthread_t t[64];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    cg_load_stats s;
    cg_load_get_stats(&s);
    printf("loaded=%d failed=%d from_disk=%d from_memory=%d\n", atomic_load(&loaded), atomic_load(&failed),
           atomic_load(&from_disk), atomic_load(&from_memory));
    printf("requests=%llu builds=%llu disk_hits=%llu memory_hits=%llu waits=%llu disk_writes=%llu corrupt=%llu\n",
           (unsigned long long)s.requests, (unsigned long long)s.builds, (unsigned long long)s.disk_hits,
           (unsigned long long)s.memory_hits, (unsigned long long)s.waits, (unsigned long long)s.disk_writes,
           (unsigned long long)s.corrupt);
    clReleaseContext(ctx);
    return 0;
}
