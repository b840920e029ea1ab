/* The cost the preloaded OpenCL layer adds to a cheap call, clGetDeviceInfo
 * (CL_DEVICE_TYPE) on PoCL's CPU device, with no policy. Run with the layer
 * preloaded (bench/bench_cl.sh does): *guarded* is clGetDeviceInfo as the
 * program's own calls bind it (RTLD_DEFAULT: the layer's wrapper), *direct*
 * is ocl-icd's clGetDeviceInfo from libOpenCL.so.1's handle. Both are called
 * through a volatile pointer, so both pay the same indirect call.
 *   bench_cl            timing: ROUNDS rounds of N calls each, order alternating
 *   bench_cl --count    one loop of N calls each under callgrind (client requests)
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>

#define N 100000
#define ROUNDS 101

typedef cl_int (*info_fn)(cl_device_id, cl_device_info, size_t, void *, size_t *);

static cl_device_id dev;

static void calls(info_fn volatile *fp, int n)
{
    cl_device_type t;
    for (int i = 0; i < n; i++)
        (*fp)(dev, CL_DEVICE_TYPE, sizeof t, &t, NULL);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double timed(info_fn volatile *fp)
{
    double t0 = now_ns();
    calls(fp, N);
    return (now_ns() - t0) / N;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *object_of(void *p)
{
    Dl_info info;
    return dladdr(p, &info) && info.dli_fname ? info.dli_fname : "?";
}

int main(int argc, char **argv)
{
    void *icd = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
    info_fn volatile direct = icd ? (info_fn)dlsym(icd, "clGetDeviceInfo") : NULL;
    info_fn volatile guarded = (info_fn)dlsym(RTLD_DEFAULT, "clGetDeviceInfo");
    cl_platform_id pl;
    if (!direct || !guarded || clGetPlatformIDs(1, &pl, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
        fprintf(stderr, "bench_cl: no OpenCL device (or libOpenCL.so.1 not linked)\n");
        return 1;
    }
    printf("direct:  clGetDeviceInfo in %s\nguarded: clGetDeviceInfo in %s\n", object_of((void *)direct),
           object_of((void *)guarded));
    calls(&direct, 1000); /* warm: the guarded site resolves its real function on its first call */
    calls(&guarded, 1000);

    if (argc > 1 && strcmp(argv[1], "--count") == 0) {
        CALLGRIND_TOGGLE_COLLECT;
        calls(&direct, N);
        CALLGRIND_TOGGLE_COLLECT;
        CALLGRIND_DUMP_STATS_AT("direct");
        CALLGRIND_TOGGLE_COLLECT;
        calls(&guarded, N);
        CALLGRIND_TOGGLE_COLLECT;
        CALLGRIND_DUMP_STATS_AT("guarded");
        return 0;
    }
    static double base[ROUNDS], cand[ROUNDS], diff[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        if (r & 1) {
            cand[r] = timed(&guarded);
            base[r] = timed(&direct);
        } else {
            base[r] = timed(&direct);
            cand[r] = timed(&guarded);
        }
        diff[r] = cand[r] - base[r];
    }
    qsort(base, ROUNDS, sizeof *base, cmp);
    qsort(cand, ROUNDS, sizeof *cand, cmp);
    qsort(diff, ROUNDS, sizeof *diff, cmp);
    printf("ns per call (median of %d rounds of %d): direct %.2f, guarded %.2f, +%.2f (paired)\n", ROUNDS, N,
           base[ROUNDS / 2], cand[ROUNDS / 2], diff[ROUNDS / 2]);
    return 0;
}
