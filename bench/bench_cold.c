/* A guarded call with cold caches (bench/bench_cold.sh runs it; docs/benchmarks.md, "Cold caches"): what
 * lines of memory a call touches beyond the direct call, when the program did other work in between. Before
 * each call the program walks a buffer larger than the last-level cache (WALK bytes, 1 MiB), so every line
 * the call needs comes from memory, as in a program that does real work between driver calls. Under
 * `valgrind --tool=callgrind --cache-sim=yes --collect-atstart=no` only the calls are collected (the walk is
 * simulated, not counted): the D1 and LL misses per call, guarded against direct, are the lines the layer
 * adds. Without valgrind it times each call alone (`--time`: clock_gettime around one call after a walk).
 *
 * *direct* is the real library's function from its own handle; *guarded* the name as the program binds it
 * (RTLD_DEFAULT: the preloaded layer's wrapper). Both are called through a volatile pointer. The kinds:
 *   info      clGetDeviceInfo(CL_DEVICE_TYPE) on PoCL through ocl-icd: a plain call that succeeds;
 *   state     clGetPlatformInfo(0): CL_INVALID_VALUE, the site's first state by bench_cold.sh's policy;
 *   finish    clFinish on an empty queue: a blocking site (apis/cl.ini);
 *   serial    clGetContextInfo, serialized by the policy file (a domain lock, the general path);
 *   allreduce ncclAllReduce of 256 floats on a communicator, on the stand-in libnccl.so.2 of tests/nccl
 *             (returns at once): the NCCL layer's hand-written wrapper, its communicator's row included.
 *   bench_cold [--time] KINDS [CALLS]   KINDS comma-separated; each kind dumped as direct_KIND, guarded_KIND
 * Built as a shared library (-DBENCH_COLD_LIB) it exports, for bench/bench_cold_py.py, the walk and the
 * collection switch, so that a CPython loop calls the function itself through ctypes between them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_callgrind.h"

#define WALK (1u << 20)

/* The walk: reads and writes every line of a buffer twice the last-level cache the simulation has. */
static unsigned char *walk_buf;
__attribute__((visibility("default"), noinline)) void bench_cold_walk(void)
{
    if (!walk_buf && !(walk_buf = calloc(1, WALK))) abort();
    for (size_t i = 0; i < WALK; i += 64)
        walk_buf[i]++;
}
/* Collection on around one call (callgrind's client request; nothing without valgrind's header). */
__attribute__((visibility("default"), noinline)) void bench_cold_on(void)
{
#if CG_BENCH_CALLGRIND
    CALLGRIND_TOGGLE_COLLECT;
#endif
}
__attribute__((visibility("default"), noinline)) void bench_cold_off(void) { bench_cold_on(); }
__attribute__((visibility("default"), noinline)) void bench_cold_dump(const char *name)
{
#if CG_BENCH_CALLGRIND
    CALLGRIND_DUMP_STATS_AT(name);
#else
    (void)name;
#endif
}

#ifndef BENCH_COLD_LIB
typedef int32_t (*cl_info_fn)(void *, uint32_t, size_t, void *, size_t *);
typedef int32_t (*cl_finish_fn)(void *);
typedef int (*nccl_allreduce_fn)(const void *, void *, size_t, int, int, void *, void *);
typedef struct fns {
    cl_info_fn info, pinfo, cinfo;
    cl_finish_fn finish;
    nccl_allreduce_fn allreduce;
} fns;

enum { INFO, STATE, FINISH, SERIAL, ALLREDUCE, NKINDS };
static const char *const kind_name[NKINDS] = {"info", "state", "finish", "serial", "allreduce"};
static void *pl, *dev, *ctx, *queue, *comm;
static float nccl_buf[256];

static void one_call(const fns *volatile *f, int kind)
{
    uint64_t t;
    uint32_t u;
    char c[8];
    const fns *p = *f;
    switch (kind) {
    case INFO: p->info(dev, 0x1000 /* CL_DEVICE_TYPE */, sizeof t, &t, NULL); break;
    case STATE: p->pinfo(pl, 0, sizeof c, c, NULL); break;
    case FINISH: p->finish(queue); break;
    case SERIAL: p->cinfo(ctx, 0x1083 /* CL_CONTEXT_NUM_DEVICES */, sizeof u, &u, NULL); break;
    case ALLREDUCE: p->allreduce(nccl_buf, nccl_buf, 256, 7 /* ncclFloat */, 0 /* ncclSum */, comm, NULL); break;
    }
}

/* One collected call with the stack `shift` 16-byte steps lower: where a call's frames fall across lines
 * depends on the stack's place, which the environment moves (a longer path, another build), and a wrapper's
 * frame of 16 bytes crosses into a new line at one place in four. count() calls at all four places in turn, so
 * that a figure is the mean over them, not one place's luck. */
__attribute__((noinline)) static void shifted_call(const fns *volatile *f, int kind, unsigned shift)
{
    char *pad = __builtin_alloca(16 * shift + 1);
    __asm__ volatile("" : : "r"(pad) : "memory");
    bench_cold_on();
    one_call(f, kind);
    bench_cold_off();
}

static void count(const fns *volatile *f, int kind, int n, const char *side)
{
    char name[40];
    for (int i = 0; i < n; i++) {
        bench_cold_walk();
        shifted_call(f, kind, (unsigned)i % 4);
    }
    snprintf(name, sizeof name, "%s_%s", side, kind_name[kind]);
    bench_cold_dump(name);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}
static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
/* The median ns of one call after a walk, n calls each side, the sides alternating call by call. */
static void time_kind(const fns *volatile *direct, const fns *volatile *guarded, int kind, int n)
{
    double *d = malloc(n * sizeof *d), *g = malloc(n * sizeof *g);
    if (!d || !g) abort();
    for (int i = 0; i < 2 * n; i++) {
        const fns *volatile *f = (i & 1) ? guarded : direct;
        bench_cold_walk();
        double t0 = now_ns();
        one_call(f, kind);
        ((i & 1) ? g : d)[i / 2] = now_ns() - t0;
    }
    qsort(d, n, sizeof *d, cmp);
    qsort(g, n, sizeof *g, cmp);
    printf("%-9s ns a call after a %u KiB walk (median of %d): direct %.1f, guarded %.1f, %+.1f\n", kind_name[kind],
           WALK >> 10, n, d[n / 2], g[n / 2], g[n / 2] - d[n / 2]);
    free(d);
    free(g);
}

static void *sym(void *handle, const char *name)
{
    void *p = dlsym(handle, name);
    if (!p) fprintf(stderr, "bench_cold: no %s\n", name);
    return p;
}

/* The functions of the kinds wanted, from `handle` (RTLD_DEFAULT: the layer's wrappers), and what they need. */
static int open_cl(void *icd, fns *d, fns *g)
{
    typedef int32_t (*ids_fn)(uint32_t, void *, uint32_t *);
    typedef int32_t (*devs_fn)(void *, uint64_t, uint32_t, void *, uint32_t *);
    typedef void *(*ctx_fn)(const void *, uint32_t, void *const *, void *, void *, int32_t *);
    typedef void *(*queue_fn)(void *, void *, const void *, int32_t *);
    int32_t err;
    ids_fn ids = (ids_fn)sym(icd, "clGetPlatformIDs");
    devs_fn devs = (devs_fn)sym(icd, "clGetDeviceIDs");
    ctx_fn mkctx = (ctx_fn)sym(icd, "clCreateContext");
    queue_fn mkq = (queue_fn)sym(icd, "clCreateCommandQueueWithProperties");
    if (!ids || !devs || !mkctx || !mkq || ids(1, &pl, NULL) != 0 || devs(pl, 0xFFFFFFFF, 1, &dev, NULL) != 0) return 0;
    if (!(ctx = mkctx(NULL, 1, &dev, NULL, NULL, &err)) || !(queue = mkq(ctx, dev, NULL, &err))) return 0;
    for (int side = 0; side < 2; side++) {
        void *h = side ? RTLD_DEFAULT : icd;
        fns *f = side ? g : d;
        f->info = (cl_info_fn)sym(h, "clGetDeviceInfo");
        f->pinfo = (cl_info_fn)sym(h, "clGetPlatformInfo");
        f->cinfo = (cl_info_fn)sym(h, "clGetContextInfo");
        f->finish = (cl_finish_fn)sym(h, "clFinish");
        if (!f->info || !f->pinfo || !f->cinfo || !f->finish) return 0;
    }
    return 1;
}

/* A communicator made through the layer (so that it has its row), as a job's rank 0 of 1 would. */
static int open_nccl(void *nccl, fns *d, fns *g)
{
    struct nccl_id {
        char internal[128];
    } id;
    typedef int (*init_fn)(void **, int, struct nccl_id, int);
    init_fn init = (init_fn)sym(RTLD_DEFAULT, "ncclCommInitRank");
    memset(&id, 0, sizeof id);
    strcpy(id.internal, "bench_cold's job");
    if (!init || init(&comm, 1, id, 0) != 0) return 0;
    d->allreduce = (nccl_allreduce_fn)sym(nccl, "ncclAllReduce");
    g->allreduce = (nccl_allreduce_fn)sym(RTLD_DEFAULT, "ncclAllReduce");
    return d->allreduce && g->allreduce;
}

/* Which kinds `list` names; 0 when it names one that is not. */
static int parse_kinds(const char *list, int want[NKINDS])
{
    memset(want, 0, NKINDS * sizeof *want);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        int k = 0;
        while (k < NKINDS && !(strlen(kind_name[k]) == n && strncmp(p, kind_name[k], n) == 0))
            k++;
        if (k == NKINDS) {
            fprintf(stderr, "bench_cold: unknown kind '%.*s': expected info, state, finish, serial or allreduce\n",
                    (int)n, p);
            return 0;
        }
        want[k] = 1;
        p += n + (p[n] == ',');
    }
    return 1;
}

int main(int argc, char **argv)
{
    int timing = argc > 1 && strcmp(argv[1], "--time") == 0, want[NKINDS];
    if (argc < 2 + timing || !parse_kinds(argv[1 + timing], want)) {
        fprintf(stderr, "usage: bench_cold [--time] KINDS [CALLS]  (KINDS: info,state,finish,serial,allreduce)\n");
        return 2;
    }
    int n = argc > 2 + timing ? atoi(argv[2 + timing]) : 2000;
    if (n < 1) n = 1;
    static fns d, g;
    const fns *volatile direct = &d, *volatile guarded = &g;
    int cl = want[INFO] || want[STATE] || want[FINISH] || want[SERIAL];
    void *icd = cl ? dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL) : NULL;
    void *nccl = want[ALLREDUCE] ? dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL) : NULL;
    if ((cl && (!icd || !open_cl(icd, &d, &g))) || (want[ALLREDUCE] && (!nccl || !open_nccl(nccl, &d, &g)))) {
        fprintf(stderr, "bench_cold: no OpenCL device, or no libnccl.so.2 (%s)\n", dlerror() ? dlerror() : "");
        return 1;
    }
    for (int k = 0; k < NKINDS; k++) {
        if (!want[k]) continue;
        for (int i = 0; i < 100; i++) { /* warm: the guarded site resolves its real function on its first call */
            one_call(&direct, k);
            one_call(&guarded, k);
        }
        if (timing) {
            time_kind(&direct, &guarded, k, n);
        } else {
            count(&direct, k, n, "direct");
            count(&guarded, k, n, "guarded");
        }
    }
    return 0;
}
#endif
