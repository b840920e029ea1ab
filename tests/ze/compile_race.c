/* The IGC 2.38.x crash (Triton #7581), on the simulator: 16 threads leave a
 * barrier together and each creates a module. With CGSIM_COMPILER_RACE=abort
 * the driver aborts when two threads are inside its compile at once, so this
 * program dies of SIGABRT unless something serializes zeModuleCreate.
 *
 *   ze_compile_race                 linked against the real loader: run plain,
 *                                   or with the layer preloaded
 *   ze_compile_race_linked [capi]   linked against libcallguard_ze.so in place
 *                                   of the loader; "capi" serializes
 *                                   zeModuleCreate through callguard's C API
 *   ze_compile_race_dlopen          dlopens libze_loader.so.1 by soname and
 *                                   takes every entry point with dlsym, which
 *                                   only a soname shim reaches
 *
 * With the argument "init", the 16 threads first each call zeInit(0) at once
 * (a thread pool whose workers initialize Level Zero lazily), then the
 * program goes on as without it.
 *
 * Prints "created N modules" and exits 0 when all 16 were created. */
#ifdef CG_ZE_DLOPEN
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#define ZE_FNS(X)                                                                                                      \
    X(zeInit) X(zeDriverGet) X(zeDeviceGet) X(zeContextCreate) X(zeContextDestroy) X(zeModuleCreate) X(zeModuleDestroy)
#define ZE_PTR(f) static __typeof__(f) *p_##f;
ZE_FNS(ZE_PTR)
static void ze_dlopen(void)
{
    void *h = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen libze_loader.so.1: %s\n", dlerror());
        exit(3);
    }
#define ZE_SYM(f)                                                                                                      \
    if (!(p_##f = (__typeof__(f) *)dlsym(h, #f))) exit(3);
    ZE_FNS(ZE_SYM)
}
/* From here on every call goes through the pointers dlsym returned. */
#define zeInit p_zeInit
#define zeDriverGet p_zeDriverGet
#define zeDeviceGet p_zeDeviceGet
#define zeContextCreate p_zeContextCreate
#define zeContextDestroy p_zeContextDestroy
#define zeModuleCreate p_zeModuleCreate
#define zeModuleDestroy p_zeModuleDestroy
#endif

#include "ze_util.h"

#include <pthread.h>
#ifdef CG_ZE_LINKED
#include <callguard/callguard.h>
#endif

#define THREADS 16

static pthread_barrier_t barrier;
static ze_sim sim;
static ze_module_handle_t modules[THREADS];

static void *init(void *arg)
{
    pthread_barrier_wait(&barrier);
    *(ze_result_t *)arg = zeInit(0);
    return NULL;
}

/* 16 threads call zeInit at once; returns how many failed. */
static int init_at_once(void)
{
    pthread_t threads[THREADS];
    ze_result_t r[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&threads[i], NULL, init, &r[i]) != 0) return THREADS;
    int failed = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        failed += r[i] != ZE_RESULT_SUCCESS;
    }
    pthread_barrier_destroy(&barrier);
    return failed;
}

static void *compile(void *arg)
{
    ze_module_handle_t *m = arg;
    pthread_barrier_wait(&barrier);
    ZE_OK(ze_sim_compile(&sim, m));
    return NULL;
}

int main(int argc, char **argv)
{
    int lazy = argc > 1 && strcmp(argv[1], "init") == 0;
    if (argc > 1 && !lazy) {
#ifdef CG_ZE_LINKED
        if (strcmp(argv[1], "capi") != 0 || cg_serialize("zeModuleCreate", "igc", CG_SCOPE_PROCESS) != CG_OK) {
            fprintf(stderr, "usage: %s [capi] (%s)\n", argv[0], cg_last_error());
            return 2;
        }
#else
        fprintf(stderr, "usage: %s [init]\n", argv[0]);
        return 2;
#endif
    }
#ifdef CG_ZE_DLOPEN
    ze_dlopen();
#endif
    if (lazy && init_at_once() != 0) {
        fprintf(stderr, "zeInit failed in some thread\n");
        return 1;
    }
    sim = ze_sim_open();
    pthread_barrier_init(&barrier, NULL, THREADS);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&threads[i], NULL, compile, &modules[i]) != 0) return 4;
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    int created = 0;
    for (int i = 0; i < THREADS; i++)
        if (modules[i]) {
            created++;
            ZE_OK(zeModuleDestroy(modules[i]));
        }
    ZE_OK(zeContextDestroy(sim.context));
    printf("created %d modules\n", created);
    return created == THREADS ? 0 : 1;
}
