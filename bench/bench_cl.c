/* What the preloaded OpenCL layer adds to each kind of call, on PoCL's CPU
 * device through ocl-icd (bench/bench_cl.sh runs it; docs/benchmarks.md,
 * "The OpenCL layer"). *guarded* is a function as the program's own calls
 * bind it (RTLD_DEFAULT: the layer's wrapper), *direct* is ocl-icd's from
 * libOpenCL.so.1's handle. Both are called through a volatile pointer, so
 * both pay the same indirect call. The kinds:
 *   info    clGetDeviceInfo(CL_DEVICE_TYPE): a plain call that succeeds;
 *   state   clGetPlatformInfo(0): CL_INVALID_VALUE, which bench_cl.sh's
 *           policy file makes the site's state (as a polling loop's
 *           CL_NOT_READY-like code);
 *   error   clGetDeviceInfo(0): CL_INVALID_VALUE, a failure;
 *   finish  clFinish on an empty queue: a blocking site (apis/cl.ini);
 *   serial  clGetContextInfo(CL_CONTEXT_NUM_DEVICES), serialized by the
 *           policy file (a domain lock, the general path).
 *   bench_cl --count [KINDS]  one loop of N calls each, direct then guarded,
 *                             dumped as direct_KIND and guarded_KIND under
 *                             callgrind (client requests)
 *   bench_cl [KINDS]          timing: ROUNDS rounds of N calls each
 * KINDS is a comma-separated list (default: all). Built as a shared library
 * (-DBENCH_CL_LIB) it exports bench_cl_main for bench/bench_cl_py.py, which
 * calls it from Python with the GIL held (ctypes.PyDLL). */
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

typedef struct fns {
    cl_int (*info)(cl_device_id, cl_device_info, size_t, void *, size_t *);
    cl_int (*pinfo)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
    cl_int (*finish)(cl_command_queue);
    cl_int (*cinfo)(cl_context, cl_context_info, size_t, void *, size_t *);
} fns;

static cl_platform_id pl;
static cl_device_id dev;
static cl_context ctx;
static cl_command_queue queue;

enum { INFO, STATE, ERROR, FINISH, SERIAL, NKINDS };
static const char *const kind_name[NKINDS] = {"info", "state", "error", "finish", "serial"};

/* n calls of one kind through *f (volatile: neither side is inlined). */
static void calls(const fns *volatile *f, int kind, int n)
{
    cl_device_type t;
    cl_uint u;
    char c[8];
    for (int i = 0; i < n; i++) {
        const fns *p = *f;
        switch (kind) {
        case INFO: p->info(dev, CL_DEVICE_TYPE, sizeof t, &t, NULL); break;
        case STATE: p->pinfo(pl, 0, sizeof c, c, NULL); break;
        case ERROR: p->info(dev, 0, sizeof t, &t, NULL); break;
        case FINISH: p->finish(queue); break;
        case SERIAL: p->cinfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof u, &u, NULL); break;
        }
    }
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double timed(const fns *volatile *f, int kind)
{
    double t0 = now_ns();
    calls(f, kind, N);
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

/* Each function from `handle` (RTLD_DEFAULT: the layer's wrappers). */
static int look_up(void *handle, fns *f)
{
    f->info = (__typeof__(f->info))dlsym(handle, "clGetDeviceInfo");
    f->pinfo = (__typeof__(f->pinfo))dlsym(handle, "clGetPlatformInfo");
    f->finish = (__typeof__(f->finish))dlsym(handle, "clFinish");
    f->cinfo = (__typeof__(f->cinfo))dlsym(handle, "clGetContextInfo");
    return f->info && f->pinfo && f->finish && f->cinfo;
}

/* The platform, device, context and empty queue, made through the layer. */
static int open_device(void)
{
    cl_int err;
    if (clGetPlatformIDs(1, &pl, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS)
        return 0;
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) return 0;
    queue = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    return err == CL_SUCCESS;
}

/* Which kinds `list` names (NULL: all); 0 when it names one that is not. */
static int parse_kinds(const char *list, int want[NKINDS])
{
    for (int k = 0; k < NKINDS; k++)
        want[k] = list == NULL;
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ",");
        int k = 0;
        while (k < NKINDS && !(strlen(kind_name[k]) == n && strncmp(p, kind_name[k], n) == 0))
            k++;
        if (k == NKINDS) {
            fprintf(stderr, "bench_cl: unknown kind '%.*s': expected info, state, error, finish or serial\n", (int)n,
                    p);
            return 0;
        }
        want[k] = 1;
        p += n + (p[n] == ',');
    }
    return 1;
}

static void count(const fns *volatile *direct, const fns *volatile *guarded, int kind)
{
    char name[32];
    CALLGRIND_TOGGLE_COLLECT;
    calls(direct, kind, N);
    CALLGRIND_TOGGLE_COLLECT;
    snprintf(name, sizeof name, "direct_%s", kind_name[kind]);
    CALLGRIND_DUMP_STATS_AT(name);
    CALLGRIND_TOGGLE_COLLECT;
    calls(guarded, kind, N);
    CALLGRIND_TOGGLE_COLLECT;
    snprintf(name, sizeof name, "guarded_%s", kind_name[kind]);
    CALLGRIND_DUMP_STATS_AT(name);
}

static void time_kind(const fns *volatile *direct, const fns *volatile *guarded, int kind)
{
    static double base[ROUNDS], cand[ROUNDS], diff[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        if (r & 1) {
            cand[r] = timed(guarded, kind);
            base[r] = timed(direct, kind);
        } else {
            base[r] = timed(direct, kind);
            cand[r] = timed(guarded, kind);
        }
        diff[r] = cand[r] - base[r];
    }
    qsort(base, ROUNDS, sizeof *base, cmp);
    qsort(cand, ROUNDS, sizeof *cand, cmp);
    qsort(diff, ROUNDS, sizeof *diff, cmp);
    printf("%-6s ns per call (median of %d rounds of %d): direct %.2f, guarded %.2f, +%.2f (paired)\n", kind_name[kind],
           ROUNDS, N, base[ROUNDS / 2], cand[ROUNDS / 2], diff[ROUNDS / 2]);
}

#ifdef BENCH_CL_LIB
__attribute__((visibility("default"))) int bench_cl_main(int argc, char **argv);
#define bench_main bench_cl_main
#else
#define bench_main main
#endif

int bench_main(int argc, char **argv)
{
    void *icd = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);
    static fns d, g;
    const fns *volatile direct = &d, *volatile guarded = &g;
    int counting = argc > 1 && strcmp(argv[1], "--count") == 0, want[NKINDS];
    if (!parse_kinds(argc > 1 + counting ? argv[1 + counting] : NULL, want)) return 2;
    if (!icd || !look_up(icd, &d) || !look_up(RTLD_DEFAULT, &g) || !open_device()) {
        fprintf(stderr, "bench_cl: no OpenCL device (or libOpenCL.so.1 not linked)\n");
        return 1;
    }
    printf("direct:  clGetDeviceInfo in %s\nguarded: clGetDeviceInfo in %s\n", object_of((void *)d.info),
           object_of((void *)g.info));
    fflush(stdout);
    for (int k = 0; k < NKINDS; k++) {
        if (!want[k]) continue;
        /* warm: the guarded site resolves its real function on its first call */
        calls(&direct, k, 1000);
        calls(&guarded, k, 1000);
        if (counting)
            count(&direct, &guarded, k);
        else
            time_kind(&direct, &guarded, k);
    }
    return 0;
}
