/* Thread-rule scenarios on a real OpenCL stack (PoCL through ocl-icd), for
 * tests/threads/threads_tests.sh. Two threads, started on a barrier:
 *   overlap    both set arguments of one cl_kernel, again and again
 *   distinct   each sets arguments of its own kernel
 *   sequence   both set the arguments of one kernel, then launch it
 *   held       the same, each sequence inside cg_handle_hold/cg_handle_release
 *              (found in the process: callguard run preloads libcallguard)
 *   handoff    one thread sets the arguments, the other launches (twice:
 *              arguments kept across launches)
 * Each thread goes on until the other has done 6 rounds as well.
 * Prints "thread A TID" and "thread B TID", then the kernel's output, which
 * must not change under callguard. Exits 1 on any unexpected result. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OK(call)                                                                                                       \
    do {                                                                                                               \
        cl_int err_ = (call);                                                                                          \
        if (err_ != CL_SUCCESS) {                                                                                      \
            fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, err_);                                       \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static const char *source = "__kernel void fill(__global int *out, int v) { out[get_global_id(0)] = v; }\n";

static cl_context ctx;
static cl_command_queue queue;
static cl_program program;
static cl_kernel kernels[2];
static cl_mem bufs[2];
static pthread_barrier_t start, handed;
static const char *mode;
static int rounds = 6;
static int (*hold)(const void *), (*release)(const void *);

static void set_args(cl_kernel k, cl_mem buf, int v)
{
    OK(clSetKernelArg(k, 0, sizeof buf, &buf));
    OK(clSetKernelArg(k, 1, sizeof v, &v));
}

static void launch(cl_kernel k)
{
    size_t n = 4;
    OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &n, NULL, 0, NULL, NULL));
}

static pid_t tids[2];
/* Rounds each thread has done: a thread goes on until the other has done
 * its rounds too, so the other's calls all come while it is still calling
 * (inside a held-open call nearly all the time), however the two threads
 * are scheduled on a busy machine. */
static _Atomic int done[2];

static void *worker(void *arg)
{
    int me = (int)(long)arg;
    tids[me] = gettid();
    pthread_barrier_wait(&start);
    cl_kernel k = strcmp(mode, "distinct") == 0 ? kernels[me] : kernels[0];
    for (int r = 0; r < rounds || atomic_load(&done[1 - me]) < rounds; r++, atomic_fetch_add(&done[me], 1)) {
        if (!strcmp(mode, "overlap") || !strcmp(mode, "distinct")) {
            set_args(k, bufs[me], me + 1);
        } else if (!strcmp(mode, "sequence")) {
            set_args(k, bufs[me], me + 1);
            launch(k);
        } else if (!strcmp(mode, "held")) {
            if (hold(k) != 0) exit(1);
            set_args(k, bufs[me], me + 1);
            launch(k);
            if (release(k) != 0) exit(1);
        }
    }
    if (!strcmp(mode, "handoff")) {
        /* A sets, hands over; B launches twice with the arguments kept. */
        if (me == 0) set_args(kernels[0], bufs[0], 7);
        pthread_barrier_wait(&handed);
        if (me == 1) launch(kernels[0]), launch(kernels[0]);
        pthread_barrier_wait(&handed);
        /* Then B sets and launches, and A launches what B left. */
        if (me == 1) set_args(kernels[0], bufs[0], 7), launch(kernels[0]);
        pthread_barrier_wait(&handed);
        if (me == 0) launch(kernels[0]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s overlap|distinct|sequence|held|handoff\n", argv[0]);
        return 2;
    }
    mode = argv[1];
    if (!strcmp(mode, "held")) {
        hold = (int (*)(const void *))dlsym(RTLD_DEFAULT, "cg_handle_hold");
        release = (int (*)(const void *))dlsym(RTLD_DEFAULT, "cg_handle_release");
        if (!hold || !release) {
            fprintf(stderr, "cg_handle_hold is not in the process: run this under callguard\n");
            return 1;
        }
    }
    cl_platform_id platform;
    cl_device_id device;
    OK(clGetPlatformIDs(1, &platform, NULL));
    OK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    cl_int err;
    ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    OK(err);
    queue = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    OK(err);
    program = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    OK(err);
    OK(clBuildProgram(program, 1, &device, "", NULL, NULL));
    for (int i = 0; i < 2; i++) {
        kernels[i] = clCreateKernel(program, "fill", &err);
        OK(err);
        bufs[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4 * sizeof(int), NULL, &err);
        OK(err);
        int zero[4] = {0};
        OK(clEnqueueWriteBuffer(queue, bufs[i], CL_TRUE, 0, sizeof zero, zero, 0, NULL, NULL));
    }
    pthread_barrier_init(&start, NULL, 2);
    pthread_barrier_init(&handed, NULL, 2);
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("thread A %d\nthread B %d\n", (int)tids[0], (int)tids[1]);
    OK(clFinish(queue));
    /* Deterministic output: each buffer holds a value one of the threads wrote, or 0. */
    for (int i = 0; i < 2; i++) {
        int out[4];
        OK(clEnqueueReadBuffer(queue, bufs[i], CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
        int ok = 1;
        for (int j = 0; j < 4; j++)
            ok &= out[j] == out[0] && out[j] >= 0 && out[j] <= 7;
        printf("buffer %d %s\n", i, ok ? "consistent" : "torn");
    }
    for (int i = 0; i < 2; i++) {
        OK(clReleaseKernel(kernels[i]));
        OK(clReleaseMemObject(bufs[i]));
    }
    OK(clReleaseProgram(program));
    OK(clReleaseCommandQueue(queue));
    OK(clReleaseContext(ctx));
    return 0;
}
