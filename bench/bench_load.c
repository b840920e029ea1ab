/* The module-loading phase of a start-up: T threads load M distinct modules
 * through cg_load_binary, as Triton's async compile does at start-up. A
 * benchmark, not a test: it prints figures, bench_load.sh compares runs
 * (serialized or not, cold or warm cache) in fresh processes.
 *
 * Usage: bench_load ze|cuda T M [PTX_FMAS]
 *   ze    the Level Zero simulator: module i in its test convention
 *         (docs/zesim.md); its compile time is CGSIM_COMPILE_MS
 *   cuda  real PTX (sm_90, PTX ISA 8.0): kernel i is PTX_FMAS (default 8000)
 *         dependent FMAs with constants of its own, so each is a distinct
 *         JIT compile of some size
 * Prints: phase_ms=... (first request to last result), the cache counters. */
#define _GNU_SOURCE
#include "callguard/load.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int api, nmodules, fmas = 8000;
static atomic_int next, failures;
static void *ctx, *dev;
static pthread_barrier_t start;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *module_bytes(int i, size_t *size)
{
    char *p = NULL;
    if (api == CG_LOAD_API_ZE) {
        p = malloc(64);
        memcpy(p, "\x03\x02\x23\x07", 4);
        int n = snprintf(p + 4, 60, "m%d:args=3", i);
        *size = 4 + (size_t)n + 1;
        return p;
    }
    size_t cap = 512 + (size_t)fmas * 64;
    p = malloc(cap);
    size_t n =
        (size_t)snprintf(p, cap,
                         ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry m%d(.param .u64 p0)\n{\n"
                         "  .reg .f32 %%f<3>;\n  .reg .b64 %%rd<3>;\n  ld.param.u64 %%rd1, [p0];\n"
                         "  cvta.to.global.u64 %%rd2, %%rd1;\n  ld.global.f32 %%f1, [%%rd2];\n"
                         "  ld.global.f32 %%f2, [%%rd2+4];\n",
                         i);
    for (int k = 0; k < fmas; k++) /* constants distinct per kernel and step: nothing to fold or share */
        n += (size_t)snprintf(p + n, cap - n, "  fma.rn.f32 %%f1, %%f1, %%f2, 0f%08X;\n",
                              0x3f800000u + (unsigned)(i * 7919 + k) % 0x7fffffu);
    n += (size_t)snprintf(p + n, cap - n, "  st.global.f32 [%%rd2], %%f1;\n  ret;\n}\n");
    *size = n;
    return p;
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (int i; (i = atomic_fetch_add(&next, 1)) < nmodules;) {
        size_t size;
        char *bytes = module_bytes(i, &size), name[32];
        snprintf(name, sizeof name, "m%d", i);
        cg_load_request req = {.api = api,
                               .context = ctx,
                               .device = dev,
                               .bytes = bytes,
                               .size = size,
                               .format = CG_LOAD_FORMAT_IL,
                               .kernel_name = name};
        cg_load_result *r = NULL;
        int rc = cg_load_binary(&req, &r);
        if (rc != CG_OK) {
            fprintf(stderr, "bench_load: %s: %s: %s\n%s", name, cg_load_status_name(rc), r ? r->message : "",
                    r ? r->build_log : "");
            atomic_fetch_add(&failures, 1);
        }
        cg_load_result_free(r);
        free(bytes);
    }
    return NULL;
}

/* Level Zero's context and device, through whatever provides the ze* names. */
static int open_ze(void)
{
    void *h = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_GLOBAL);
#define ZE_SYM(name) ((int (*)())(h ? dlsym(h, #name) : NULL))
    int (*init)(int) = (int (*)(int))ZE_SYM(zeInit);
    int (*driver_get)(unsigned *, void **) = (int (*)(unsigned *, void **))ZE_SYM(zeDriverGet);
    int (*device_get)(void *, unsigned *, void **) = (int (*)(void *, unsigned *, void **))ZE_SYM(zeDeviceGet);
    int (*context_create)(void *, const void *, void **) =
        (int (*)(void *, const void *, void **))ZE_SYM(zeContextCreate);
    if (!init || !driver_get || !device_get || !context_create) return -1;
    void *drv;
    unsigned n = 1;
    struct {
        int stype;
        const void *next;
        unsigned flags;
    } cd = {0xd /* ZE_STRUCTURE_TYPE_CONTEXT_DESC */, NULL, 0};
    if (init(0) || driver_get(&n, &drv) || (n = 1, device_get(drv, &n, &dev)) || context_create(drv, &cd, &ctx))
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "ze") != 0 && strcmp(argv[1], "cuda") != 0)) {
        fprintf(stderr, "usage: bench_load ze|cuda THREADS MODULES [PTX_FMAS]\n");
        return 2;
    }
    api = strcmp(argv[1], "ze") == 0 ? CG_LOAD_API_ZE : CG_LOAD_API_CUDA;
    int nthreads = atoi(argv[2]);
    nmodules = atoi(argv[3]);
    if (argc > 4) fmas = atoi(argv[4]);
    if (nthreads < 1 || nthreads > 256 || nmodules < 1 || fmas < 1) return 2;
    if (api == CG_LOAD_API_ZE && open_ze() != 0) {
        fprintf(stderr, "bench_load: no Level Zero device (ZE_ENABLE_ALT_DRIVERS=.../libze_cgsim.so?)\n");
        return 3;
    }
    if (api == CG_LOAD_API_CUDA) {
        void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
        int (*cu_init)(unsigned) = h ? (int (*)(unsigned))dlsym(h, "cuInit") : NULL;
        if (!cu_init || cu_init(0) != 0) {
            fprintf(stderr, "bench_load: cuInit failed (no libcuda.so.1 or no GPU)\n");
            return 3;
        }
    }
    pthread_t t[256];
    pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    double t0 = now_ms();
    pthread_barrier_wait(&start);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    double ms = now_ms() - t0;
    cg_load_stats s;
    cg_load_get_stats(&s);
    printf("phase_ms=%.3f builds=%llu disk_hits=%llu failures=%d\n", ms, (unsigned long long)s.builds,
           (unsigned long long)s.disk_hits, atomic_load(&failures));
    return atomic_load(&failures) ? 1 : 0;
}
