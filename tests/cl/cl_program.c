/* A real OpenCL program for the cl layer's tests, built twice: linked against
 * ocl-icd's libOpenCL.so.1 (run plain or with the layer preloaded) and linked
 * against libcallguard_cl.so in its place. Modes:
 *   run [COUNTS]  build, set arguments, enqueue, read back, wait, events and
 *                 callbacks that call OpenCL again; prints the results and,
 *                 with COUNTS, writes how many times it called each entry point
 *   race N        N threads build distinct programs at once (started on a
 *                 barrier); prints what the test's interposer below the layer saw
 *   info N K      N threads call clGetDeviceInfo K times and one calls
 *                 clGetPlatformInfo K times, all started on a barrier; prints
 *                 what the interposer saw
 *   enqueue K     2 queues, 2 threads on each, each writing a buffer K times
 *                 (blocking clEnqueueWriteBuffer); prints what the interposer saw
 *   missing       first calls when no real library can be found: prints results
 * Exits 1 on any unexpected result; alarm() turns a deadlock into a failure. */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_gl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the program's own count of its calls, compared with the layer's report ---- */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    const char *name;
    unsigned n;
} counts[64];

static void note(const char *name)
{
    pthread_mutex_lock(&count_lock);
    int i = 0;
    while (counts[i].name && strcmp(counts[i].name, name) != 0)
        i++;
    counts[i].name = name;
    counts[i].n++;
    pthread_mutex_unlock(&count_lock);
}

#define CL(fn, ...) (note(#fn), fn(__VA_ARGS__))
#define OK(call)                                                                                                       \
    do {                                                                                                               \
        cl_int err_ = (call);                                                                                          \
        if (err_ != CL_SUCCESS) {                                                                                      \
            fprintf(stderr, "%s:%d: %s: %d\n", __FILE__, __LINE__, #call, err_);                                       \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static const char *source = "__kernel void saxpy(__global const float *x, __global float *y, float a)\n"
                            "{ size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n";

typedef struct setup {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
} setup;

static setup open_device(void)
{
    setup s;
    cl_uint n = 0;
    OK(CL(clGetPlatformIDs, 0, NULL, &n));
    if (n < 1) exit(1);
    OK(CL(clGetPlatformIDs, 1, &s.platform, NULL));
    OK(CL(clGetDeviceIDs, s.platform, CL_DEVICE_TYPE_ALL, 1, &s.device, NULL));
    cl_int err = 0;
    s.ctx = CL(clCreateContext, NULL, 1, &s.device, NULL, NULL, &err);
    OK(err);
    return s;
}

/* ---- run: one of everything a real program does ---- */
static atomic_int build_notified, event_callbacks;
static atomic_int callback_status = CL_SUCCESS;

static void CL_CALLBACK on_built(cl_program prog, void *user)
{
    cl_device_id dev = user;
    cl_build_status st = CL_BUILD_NONE;
    cl_int err = CL(clGetProgramBuildInfo, prog, dev, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL);
    if (err != CL_SUCCESS || st != CL_BUILD_SUCCESS) atomic_store(&callback_status, err ? err : -1000);
    atomic_fetch_add(&build_notified, 1);
}

static void CL_CALLBACK on_event(cl_event ev, cl_int status, void *user)
{
    (void)user;
    cl_int st = -1;
    cl_int err = CL(clGetEventInfo, ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    if (err != CL_SUCCESS || st != CL_COMPLETE || status != CL_COMPLETE)
        atomic_store(&callback_status, err ? err : -1001);
    atomic_fetch_add(&event_callbacks, 1);
}

static void wait_for(atomic_int *v, int want)
{
    for (int i = 0; i < 10000 && atomic_load(v) < want; i++)
        sleep_ms(1);
    if (atomic_load(v) != want) {
        fprintf(stderr, "callbacks: %d of %d ran\n", atomic_load(v), want);
        exit(1);
    }
}

enum { N = 1024 }; /* the items of a launch */

/* What run makes, released at its end. */
typedef struct run_objects {
    cl_command_queue q;
    cl_program prog;
    cl_kernel k;
    cl_mem bx, by;
    cl_event run_ev, read_ev, user;
} run_objects;

/* The queue, and the saxpy kernel, built with a callback. */
static void build_saxpy(const setup *s, run_objects *o)
{
    cl_int err = 0;
    o->q = CL(clCreateCommandQueueWithProperties, s->ctx, s->device, NULL, &err);
    OK(err);
    o->prog = CL(clCreateProgramWithSource, s->ctx, 1, &source, NULL, &err);
    OK(err);
    OK(CL(clBuildProgram, o->prog, 1, &s->device, "", on_built, s->device));
    wait_for(&build_notified, 1);
    o->k = CL(clCreateKernel, o->prog, "saxpy", &err);
    OK(err);
}

/* y = 2x + y twice: the first launch waited for by its event (with a
 * callback) and read back blocking into out, the second read without
 * blocking into out2 and waited for by the read's event. */
static void launch_saxpy(const setup *s, run_objects *o, float *out, float *out2)
{
    static float x[N], y[N];
    cl_int err = 0;
    for (int i = 0; i < N; i++)
        x[i] = (float)i, y[i] = (float)(N - i);
    o->bx = CL(clCreateBuffer, s->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &err);
    OK(err);
    o->by = CL(clCreateBuffer, s->ctx, CL_MEM_READ_WRITE, sizeof y, NULL, &err);
    OK(err);
    OK(CL(clEnqueueWriteBuffer, o->q, o->by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL));
    float a = 2.0f;
    OK(CL(clSetKernelArg, o->k, 0, sizeof o->bx, &o->bx));
    OK(CL(clSetKernelArg, o->k, 1, sizeof o->by, &o->by));
    OK(CL(clSetKernelArg, o->k, 2, sizeof a, &a));

    size_t global = N;
    OK(CL(clEnqueueNDRangeKernel, o->q, o->k, 1, NULL, &global, NULL, 0, NULL, &o->run_ev));
    OK(CL(clSetEventCallback, o->run_ev, CL_COMPLETE, on_event, NULL));
    OK(CL(clWaitForEvents, 1, &o->run_ev));
    OK(CL(clEnqueueReadBuffer, o->q, o->by, CL_TRUE, 0, N * sizeof *out, out, 0, NULL, NULL));
    OK(CL(clEnqueueNDRangeKernel, o->q, o->k, 1, NULL, &global, NULL, 0, NULL, NULL));
    OK(CL(clEnqueueReadBuffer, o->q, o->by, CL_FALSE, 0, N * sizeof *out2, out2, 0, NULL, &o->read_ev));
    OK(CL(clWaitForEvents, 1, &o->read_ev));
    OK(CL(clFinish, o->q));
}

/* A user event: its callback runs when the host completes it. Returns 1
 * when a callback's call failed. */
static int complete_user_event(const setup *s, run_objects *o)
{
    cl_int err = 0;
    o->user = CL(clCreateUserEvent, s->ctx, &err);
    OK(err);
    OK(CL(clSetEventCallback, o->user, CL_COMPLETE, on_event, NULL));
    OK(CL(clSetUserEventStatus, o->user, CL_COMPLETE));
    wait_for(&event_callbacks, 2);
    if (atomic_load(&callback_status) != CL_SUCCESS) {
        fprintf(stderr, "a callback's call failed: %d\n", atomic_load(&callback_status));
        return 1;
    }
    return 0;
}

static void print_results(const setup *s, const char *name, const float *out, const float *out2)
{
    double sum = 0, sum2 = 0;
    for (int i = 0; i < N; i++)
        sum += out[i], sum2 += out2[i];
    printf("platform=%s\n", name);
    printf("saxpy: out[0]=%.1f out[%d]=%.1f sum=%.1f\n", out[0], N - 1, out[N - 1], sum);
    printf("saxpy twice: out[0]=%.1f sum=%.1f\n", out2[0], sum2);
    printf("callbacks: build=%d event=%d\n", atomic_load(&build_notified), atomic_load(&event_callbacks));
    /* A pass-through name (cl_gl.h, not cl.h): the layer forwards it uncounted, so not through CL(). */
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)s->platform, 0};
    size_t size = 0;
    printf("clGetGLContextInfoKHR: %d\n",
           clGetGLContextInfoKHR(props, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, 0, NULL, &size));
}

static void release_all(const setup *s, const run_objects *o)
{
    OK(CL(clReleaseEvent, o->user));
    OK(CL(clReleaseEvent, o->read_ev));
    OK(CL(clReleaseEvent, o->run_ev));
    OK(CL(clReleaseMemObject, o->by));
    OK(CL(clReleaseMemObject, o->bx));
    OK(CL(clReleaseKernel, o->k));
    OK(CL(clReleaseProgram, o->prog));
    OK(CL(clReleaseCommandQueue, o->q));
    OK(CL(clReleaseContext, s->ctx));
}

/* How many times the program called each entry point, one "name n" a line. */
static int write_counts(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    for (int i = 0; counts[i].name; i++)
        fprintf(f, "%s %u\n", counts[i].name, counts[i].n);
    fclose(f);
    return 0;
}

static int run(const char *counts_path)
{
    setup s = open_device();
    char name[256] = "";
    OK(CL(clGetPlatformInfo, s.platform, CL_PLATFORM_NAME, sizeof name, name, NULL));
    run_objects o;
    build_saxpy(&s, &o);
    static float out[N], out2[N];
    launch_saxpy(&s, &o, out, out2);
    if (complete_user_event(&s, &o)) return 1;
    print_results(&s, name, out, out2);
    release_all(&s, &o);
    return counts_path ? write_counts(counts_path) : 0;
}

/* ---- race: threads build distinct programs at once ---- */
static setup race_setup;
static pthread_barrier_t race_start;
static atomic_int race_failed;

static void *race_thread(void *arg)
{
    char src[512];
    snprintf(src, sizeof src, "__kernel void k%d(__global int *p) { p[get_global_id(0)] += %d; }\n", (int)(intptr_t)arg,
             (int)(intptr_t)arg * 7 + 1);
    const char *text = src;
    cl_int err = 0;
    cl_program prog = clCreateProgramWithSource(race_setup.ctx, 1, &text, NULL, &err);
    pthread_barrier_wait(&race_start);
    if (err != CL_SUCCESS || clBuildProgram(prog, 1, &race_setup.device, "", NULL, NULL) != CL_SUCCESS)
        atomic_fetch_add(&race_failed, 1);
    if (prog) clReleaseProgram(prog);
    return NULL;
}

static int race(int n)
{
    race_setup = open_device();
    pthread_t t[64];
    pthread_barrier_init(&race_start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, race_thread, (void *)(intptr_t)i);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    int (*max_inside)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cgspy_max_inside");
    int (*calls)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cgspy_calls");
    if (!max_inside || !calls) {
        fprintf(stderr, "the test's interposer (libcgclspy.so) is not loaded\n");
        return 1;
    }
    printf("builds=%d failed=%d max_inside=%d\n", calls(), atomic_load(&race_failed), max_inside());
    clReleaseContext(race_setup.ctx);
    return atomic_load(&race_failed) ? 1 : 0;
}

/* ---- info: device queries from N threads, platform queries from one ---- */
static int info_k;

static void *info_thread(void *arg)
{
    char name[256];
    pthread_barrier_wait(&race_start);
    for (int i = 0; i < info_k; i++) {
        cl_int err = arg ? clGetPlatformInfo(race_setup.platform, CL_PLATFORM_NAME, sizeof name, name, NULL)
                         : clGetDeviceInfo(race_setup.device, CL_DEVICE_NAME, sizeof name, name, NULL);
        if (err != CL_SUCCESS) atomic_fetch_add(&race_failed, 1);
    }
    return NULL;
}

static int info(int n, int k)
{
    race_setup = open_device();
    info_k = k;
    pthread_t t[65];
    if (n < 1 || n > 64) return 2;
    pthread_barrier_init(&race_start, NULL, (unsigned)n + 1);
    for (int i = 0; i <= n; i++)
        pthread_create(&t[i], NULL, info_thread, (void *)(intptr_t)(i == n));
    for (int i = 0; i <= n; i++)
        pthread_join(t[i], NULL);
    int (*dev_max)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cgspy_device_info_max_inside");
    int (*together)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cgspy_info_together");
    if (!dev_max || !together) {
        fprintf(stderr, "the test's interposer (libcgclspy.so) is not loaded\n");
        return 1;
    }
    printf("failed=%d device_info_max_inside=%d together=%d\n", atomic_load(&race_failed), dev_max(), together());
    clReleaseContext(race_setup.ctx);
    return atomic_load(&race_failed) ? 1 : 0;
}

/* ---- enqueue: two threads on each of two queues ---- */
static cl_command_queue enq_queue[2];
static cl_mem enq_buf[4];

static void *enqueue_thread(void *arg)
{
    int i = (int)(intptr_t)arg;
    int data[64] = {i};
    pthread_barrier_wait(&race_start);
    for (int k = 0; k < info_k; k++)
        if (clEnqueueWriteBuffer(enq_queue[i % 2], enq_buf[i], CL_TRUE, 0, sizeof data, data, 0, NULL, NULL) !=
            CL_SUCCESS)
            atomic_fetch_add(&race_failed, 1);
    return NULL;
}

static int enqueue(int k)
{
    race_setup = open_device();
    info_k = k;
    cl_int err = 0;
    for (int q = 0; q < 2; q++) {
        enq_queue[q] = clCreateCommandQueueWithProperties(race_setup.ctx, race_setup.device, NULL, &err);
        OK(err);
    }
    for (int b = 0; b < 4; b++) {
        enq_buf[b] = clCreateBuffer(race_setup.ctx, CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
        OK(err);
    }
    pthread_t t[4];
    pthread_barrier_init(&race_start, NULL, 4);
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, enqueue_thread, (void *)(intptr_t)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    int (*max_inside)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cgspy_enqueue_max_inside");
    if (!max_inside) {
        fprintf(stderr, "the test's interposer (libcgclspy.so) is not loaded\n");
        return 1;
    }
    printf("failed=%d writes_max_inside=%d\n", atomic_load(&race_failed), max_inside());
    for (int b = 0; b < 4; b++)
        clReleaseMemObject(enq_buf[b]);
    for (int q = 0; q < 2; q++)
        clReleaseCommandQueue(enq_queue[q]);
    clReleaseContext(race_setup.ctx);
    return atomic_load(&race_failed) ? 1 : 0;
}

/* ---- missing: what calls return when no real library is found ---- */
static int missing(void)
{
    cl_uint n = 99;
    cl_int a = clGetPlatformIDs(0, NULL, &n);
    cl_int b = clGetPlatformIDs(0, NULL, &n);
    cl_int err = 0;
    cl_context ctx = clCreateContext(NULL, 0, NULL, NULL, NULL, &err);
    void *ext = clGetExtensionFunctionAddress("clIcdGetPlatformIDsKHR");
    size_t size = 0;
    cl_int gl = clGetGLContextInfoKHR(NULL, CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR, 0, NULL, &size); /* pass-through */
    printf("clGetPlatformIDs=%d,%d clCreateContext=%s,%d clGetExtensionFunctionAddress=%s clGetGLContextInfoKHR=%d\n",
           a, b, ctx ? "handle" : "NULL", err, ext ? "address" : "NULL", gl);
    return 0;
}

int main(int argc, char **argv)
{
    alarm(120);
    if (argc >= 2 && strcmp(argv[1], "run") == 0) return run(argc > 2 ? argv[2] : NULL);
    if (argc >= 3 && strcmp(argv[1], "race") == 0) return race(atoi(argv[2]));
    if (argc >= 4 && strcmp(argv[1], "info") == 0) return info(atoi(argv[2]), atoi(argv[3]));
    if (argc >= 3 && strcmp(argv[1], "enqueue") == 0) return enqueue(atoi(argv[2]));
    if (argc >= 2 && strcmp(argv[1], "missing") == 0) return missing();
    fprintf(stderr, "usage: cl_program run [COUNTS] | race N | info N K | enqueue K | missing\n");
    return 2;
}
