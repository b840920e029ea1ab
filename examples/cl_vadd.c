/* The main demo on a real OpenCL stack (PoCL through ocl-icd): four threads
 * each build their own program and add two vectors with it, the way a JIT
 * compiles kernels on a thread pool. Run it under
 *   callguard run --serialize clBuildProgram --report - -- cl_vadd
 * to see every OpenCL call counted and the builds taking turns. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define N 1024

static cl_context ctx;
static cl_device_id dev;
static int failures;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    char src[256];
    /* Each thread's kernel differs, so no build is a cache hit. */
    snprintf(src, sizeof src,
             "__kernel void vadd(__global const float *a, __global const float *b, __global float *c)"
             "{ int i = get_global_id(0); c[i] = a[i] + b[i] + %d.0f; }",
             id);
    const char *s = src;
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
    if (err == CL_SUCCESS) err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    cl_kernel k = err == CL_SUCCESS ? clCreateKernel(prog, "vadd", &err) : NULL;
    cl_command_queue q = err == CL_SUCCESS ? clCreateCommandQueueWithProperties(ctx, dev, NULL, &err) : NULL;
    float a[N], b[N], c[N];
    for (int i = 0; i < N; i++)
        a[i] = (float)i, b[i] = (float)(2 * i);
    cl_mem ma = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &err);
    cl_mem mb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b, &err);
    cl_mem mc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof c, NULL, &err);
    int bad = err != CL_SUCCESS || !k || !q;
    if (!bad) {
        size_t global = N;
        clSetKernelArg(k, 0, sizeof ma, &ma);
        clSetKernelArg(k, 1, sizeof mb, &mb);
        clSetKernelArg(k, 2, sizeof mc, &mc);
        bad = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) != CL_SUCCESS ||
              clEnqueueReadBuffer(q, mc, CL_TRUE, 0, sizeof c, c, 0, NULL, NULL) != CL_SUCCESS;
        for (int i = 0; !bad && i < N; i++)
            bad = c[i] != (float)(3 * i + id);
    }
    clReleaseMemObject(ma), clReleaseMemObject(mb), clReleaseMemObject(mc);
    if (q) clReleaseCommandQueue(q);
    if (k) clReleaseKernel(k);
    clReleaseProgram(prog);
    pthread_mutex_lock(&lock);
    failures += bad;
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    cl_platform_id plat;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &plat, &n) != CL_SUCCESS || n == 0 ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        fprintf(stderr, "cl_vadd: no OpenCL device (install pocl-opencl-icd)\n");
        return 1;
    }
    cl_int err;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) return 1;
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    clReleaseContext(ctx);
    printf("cl_vadd: %d threads built and ran their kernels: %s\n", THREADS,
           failures ? "WRONG RESULTS" : "all results correct");
    return failures != 0;
}
