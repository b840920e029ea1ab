/* pocl/pocl PR #2216's race on a real OpenCL stack: one command (a read) waits on two user
 * events, and two threads set them to an error status at once. PoCL before 7.2 may finish the
 * waiting command twice (an assertion in PoCL builds that keep asserts, Debian's does; a freed
 * event reused otherwise). Each round starts both threads on a barrier.
 *
 * usage: user_event_race ROUNDS   prints "rounds: N" and exits 0 when every round ended;
 * exits 77 without an OpenCL platform, 1 on an OpenCL error. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_barrier_t start;

static void *set_error(void *ev)
{
    pthread_barrier_wait(&start);
    clSetUserEventStatus((cl_event)ev, -1); /* an error: the waiter is terminated */
    return NULL;
}

static int fail(const char *what, cl_int err)
{
    fprintf(stderr, "user_event_race: %s: %d\n", what, (int)err);
    return 1;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 200;
    cl_platform_id p;
    cl_device_id d;
    cl_uint n = 0;
    if (clGetPlatformIDs(1, &p, &n) != CL_SUCCESS || n == 0) return 77;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS) return 77;
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
    if (!ctx) return fail("clCreateContext", err);
    cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &err);
    if (!q) return fail("clCreateCommandQueue", err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    if (!buf) return fail("clCreateBuffer", err);
    char host[64];
    pthread_barrier_init(&start, NULL, 2);
    int r;
    for (r = 0; r < rounds; r++) {
        cl_event ev[2], read;
        for (int i = 0; i < 2; i++) {
            ev[i] = clCreateUserEvent(ctx, &err);
            if (!ev[i]) return fail("clCreateUserEvent", err);
        }
        err = clEnqueueReadBuffer(q, buf, CL_FALSE, 0, sizeof host, host, 2, ev, &read);
        if (err != CL_SUCCESS) return fail("clEnqueueReadBuffer", err);
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, set_error, ev[i]);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        clWaitForEvents(1, &read); /* fails: a dependency failed */
        clReleaseEvent(read);
        clReleaseEvent(ev[0]);
        clReleaseEvent(ev[1]);
    }
    clFinish(q);
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    printf("rounds: %d\n", r);
    return 0;
}
