/* Level Zero and OpenCL compiles in one process: 4 threads create Level Zero
 * modules on the simulator and 4 build OpenCL programs on PoCL, all leaving
 * one barrier together, two compiles each. Run with callguard's layers
 * preloaded; the probe below them (igc_probe.c, linked into this program)
 * counts overlaps. Prints
 *   ze=N cl=N max_inside=N cross=N
 * and exits 0 when every compile succeeded. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

#include "ze_util.h"

#define PER_API 4
#define COMPILES 2

void cg_probe_counts(int *ze, int *cl, int *max, int *crossed);

static pthread_barrier_t barrier;
static ze_sim sim;
static cl_context ctx;
static cl_device_id dev;
static atomic_int failures;

static void *ze_worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < COMPILES; i++) {
        ze_module_handle_t m = NULL;
        if (ze_sim_compile(&sim, &m) != ZE_RESULT_SUCCESS || zeModuleDestroy(m) != ZE_RESULT_SUCCESS)
            atomic_fetch_add(&failures, 1);
    }
    return NULL;
}

static void *cl_worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < COMPILES; i++) {
        /* A source of its own, so PoCL's cache cannot skip the compile. */
        char src[200];
        snprintf(src, sizeof src, "kernel void k(global int *a) { a[get_global_id(0)] = %d; }\n",
                 (int)getpid() * 16 + id * COMPILES + i);
        const char *s = src;
        cl_int err;
        cl_program p = clCreateProgramWithSource(ctx, 1, &s, NULL, &err);
        if (err != CL_SUCCESS || clBuildProgram(p, 1, &dev, NULL, NULL, NULL) != CL_SUCCESS)
            atomic_fetch_add(&failures, 1);
        if (p) clReleaseProgram(p);
    }
    return NULL;
}

int main(void)
{
    sim = ze_sim_open();
    cl_platform_id plat;
    cl_int err;
    if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        fprintf(stderr, "no OpenCL device\n");
        return 3;
    }
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) return 3;

    pthread_barrier_init(&barrier, NULL, 2 * PER_API);
    pthread_t t[2 * PER_API];
    for (int i = 0; i < PER_API; i++) {
        pthread_create(&t[i], NULL, ze_worker, NULL);
        pthread_create(&t[PER_API + i], NULL, cl_worker, (void *)(intptr_t)i);
    }
    for (int i = 0; i < 2 * PER_API; i++)
        pthread_join(t[i], NULL);
    clReleaseContext(ctx);
    ZE_OK(zeContextDestroy(sim.context));

    int ze, cl, max, crossed;
    cg_probe_counts(&ze, &cl, &max, &crossed);
    printf("ze=%d cl=%d max_inside=%d cross=%d\n", ze, cl, max, crossed);
    return atomic_load(&failures) ? 1 : 0;
}
