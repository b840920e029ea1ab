/* oneAPI.jl's test (PR #704) on a real stack, with a stand-in for libjulia
 * (libjulia_standin.c: Julia cannot be installed here): a thread Julia
 * knows waits about 1 s in clFinish on PoCL while another asks for a
 * collection, which waits for every thread Julia knows to be GC-safe.
 * Linked against libOpenCL.so.1 and the stand-in as a Julia program is
 * against libjulia; run under `callguard run`. Prints one JSON line.
 *
 *   pause     the main thread collects 100 ms into the worker's wait:
 *             collect_ms is how long the collection took
 *   foreign   the same wait on a thread Julia does not know (never adopted):
 *             the stand-in aborts if anything touches its GC state
 *   gcsafe    the same wait made GC-safe by the caller, as a package's
 *             @gcsafe_ccall does (jl_gc_safe_enter/leave around the call)
 *   callback  a thread Julia knows builds a program with a notify callback,
 *             which PoCL calls during clBuildProgram, on that thread: the
 *             callback enters Julia as an @cfunction does (GC-unsafe), and
 *             makes a guarded call there (clGetProgramInfo) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The stand-in's Julia functions and probes. */
void *jl_adopt_thread(void);
void jl_gc_collect(int full);
void jl_gc_safepoint(void);
int8_t jl_gc_safe_enter(void);
void jl_gc_safe_leave(int8_t state);
int8_t jl_gc_unsafe_enter(void);
void jl_gc_unsafe_leave(int8_t state);
int cg_standin_gc_state(void);
long cg_standin_safe_enters(void);

static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;
static cl_kernel spin;
static cl_mem buf;
static cl_int n_iter;

static const char *src = "__kernel void spin(__global float *x, int n) {\n"
                         "    float a = x[0];\n"
                         "    for (int i = 0; i < n; i++) a = a * 0.9999999f + 0.5f;\n"
                         "    x[0] = a;\n"
                         "}\n";

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char *what, cl_int err)
{
    fprintf(stderr, "julia_gc_pause: %s failed (%d)\n", what, (int)err);
    exit(1);
}

static void launch(cl_int n)
{
    size_t one = 1;
    cl_int err = clSetKernelArg(spin, 1, sizeof n, &n);
    if (!err) err = clEnqueueNDRangeKernel(q, spin, 1, NULL, &one, &one, 0, NULL, NULL);
    if (err) die("launch", err);
}

/* PoCL compiles at the first launch: scale the kernel after it to about
 * 1 s on this machine, from a sample of at least 200 ms. */
static void setup(void)
{
    cl_platform_id p;
    cl_int err = clGetPlatformIDs(1, &p, NULL);
    if (!err) err = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL);
    if (err) die("finding a device", err);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (!err) q = clCreateCommandQueue(ctx, dev, 0, &err);
    float one = 1;
    if (!err) buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof one, &one, &err);
    cl_program prog = err ? NULL : clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (!err) err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    if (!err) spin = clCreateKernel(prog, "spin", &err);
    if (!err) err = clSetKernelArg(spin, 0, sizeof buf, &buf);
    if (err) die("building the kernel", err);
    launch(1000);
    clFinish(q);
    double n = 1 << 20, took;
    for (;;) {
        double t = now_ms();
        launch((cl_int)n);
        clFinish(q);
        took = now_ms() - t;
        if (took > 200 || n > 1e10) break;
        n *= 4;
    }
    n = n * 1000 / took;
    n_iter = n > 2147483647.0 ? 2147483647 : (cl_int)n;
}

static double wait_ms;
enum { FOREIGN, ADOPTED, GCSAFE };

static void *waiter(void *how)
{
    int adopt = (long)how != FOREIGN;
    if (adopt) jl_adopt_thread();
    launch(n_iter);
    double t = now_ms();
    if ((long)how == GCSAFE) {
        int8_t was = jl_gc_safe_enter();
        clFinish(q);
        jl_gc_safe_leave(was);
    } else {
        clFinish(q);
    }
    wait_ms = now_ms() - t;
    /* Back in Julia code: a collection asked meanwhile runs here, if it
     * could not while the thread waited. */
    if (adopt) jl_gc_safepoint();
    return NULL;
}

static int pause_test(long how)
{
    pthread_t th;
    pthread_create(&th, NULL, waiter, (void *)how);
    usleep(100 * 1000);
    double t = now_ms();
    jl_gc_collect(1);
    double collect_ms = now_ms() - t;
    pthread_join(th, NULL);
    printf("{\"collect_ms\": %.3f, \"wait_ms\": %.3f, \"state_after\": %d}\n", collect_ms, wait_ms,
           cg_standin_gc_state());
    return 0;
}

/* What the callback saw. */
static struct {
    int ran, on_caller;
    int prev, state_in, state_after_nested, state_after_call;
    long nested_enters;
} cb;
static pthread_t caller;

/* An @cfunction called by the driver: GC-unsafe while it runs Julia code,
 * the previous state back when it returns (src/llvm-ptls.cpp). */
static void CL_CALLBACK notify(cl_program prog, void *user)
{
    (void)user;
    int8_t prev = jl_gc_unsafe_enter();
    cb.ran = 1;
    cb.on_caller = pthread_equal(pthread_self(), caller);
    cb.prev = prev;
    cb.state_in = cg_standin_gc_state();
    long before = cg_standin_safe_enters();
    cl_uint ndev = 0;
    clGetProgramInfo(prog, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, NULL); /* a nested guarded call */
    cb.nested_enters = cg_standin_safe_enters() - before;
    cb.state_after_nested = cg_standin_gc_state();
    jl_gc_unsafe_leave(prev);
}

static void *builder(void *unused)
{
    (void)unused;
    jl_adopt_thread();
    caller = pthread_self();
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (!err) err = clBuildProgram(prog, 1, &dev, "-DCALLBACK_TEST", notify, NULL);
    if (err) die("clBuildProgram with a callback", err);
    cb.state_after_call = cg_standin_gc_state();
    clReleaseProgram(prog);
    return NULL;
}

static int callback_test(void)
{
    pthread_t th;
    pthread_create(&th, NULL, builder, NULL);
    pthread_join(th, NULL);
    printf("{\"ran\": %d, \"on_caller\": %d, \"prev\": %d, \"state_in\": %d, \"nested_enters\": %ld, "
           "\"state_after_nested\": %d, \"state_after_call\": %d}\n",
           cb.ran, cb.on_caller, cb.prev, cb.state_in, cb.nested_enters, cb.state_after_nested, cb.state_after_call);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setup();
    jl_adopt_thread(); /* the main thread is Julia's, as in `julia` */
    if (strcmp(mode, "pause") == 0) return pause_test(ADOPTED);
    if (strcmp(mode, "foreign") == 0) return pause_test(FOREIGN);
    if (strcmp(mode, "gcsafe") == 0) return pause_test(GCSAFE);
    if (strcmp(mode, "callback") == 0) return callback_test();
    fprintf(stderr, "usage: julia_gc_pause pause|foreign|gcsafe|callback\n");
    return 2;
}
