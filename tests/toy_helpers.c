/* What the runners of the toy layer's behaviour tests share (toy_helpers.h). */
#include "toy_helpers.h"
#include "cgtest.h"

#include <callguard/callguard.h>
#include <pthread.h>
#include <stdatomic.h>

toy_device_t dev(uint32_t i)
{
    toy_device_t d = NULL;
    if (toyGetDevice(i, &d) != TOY_SUCCESS) abort();
    return d;
}

/* ---- 8 threads compile at once --------------------------------------------- */

typedef struct race {
    pthread_barrier_t start;
    int devices;       /* threads spread over this many devices */
    uint32_t sleep_us; /* inside the toy compiler's race window */
    atomic_int failed;
} race;

static race R;

static void *race_thread(void *arg)
{
    int i = (int)(intptr_t)arg;
    toy_program_t p = NULL;
    pthread_barrier_wait(&R.start);
    if (toyCompile(dev((uint32_t)(i % R.devices)), "kernel", R.sleep_us, &p) != TOY_SUCCESS)
        atomic_fetch_add(&R.failed, 1);
    else
        toyProgramRelease(p);
    return NULL;
}

int run_race(int nthreads, int devices, uint32_t sleep_us)
{
    pthread_t t[16];
    R.devices = devices;
    R.sleep_us = sleep_us;
    pthread_barrier_init(&R.start, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, race_thread, (void *)(intptr_t)i);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&R.start);
    return atomic_load(&R.failed);
}

/* child: 8 threads compile on one device; argv[0] = plain | api | env */
int child_compile_race(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "api") == 0 && cg_serialize("toyCompile", "compiler", CG_SCOPE_PROCESS) != CG_OK) {
        fprintf(stderr, "cg_serialize: %s\n", cg_last_error());
        return 3;
    }
    if (run_race(8, 1, 20000) != 0) return 4;
    toy_stats_t st;
    toyGetStats(&st);
    printf("compiles=%u max_inside=%u\n", st.compiles, st.max_inside);
    return st.compiles == 8 && st.max_inside == 1 ? 0 : 5;
}

void *hold_lock(void *arg)
{
    toy_program_t p = NULL;
    (void)arg;
    /* A handle's lock held across the fork too (hlock.c). */
    if (cg_handle_hold(dev(2)) != CG_OK) abort();
    toyCompile(dev(0), "long", 300000, &p);
    toyProgramRelease(p);
    cg_handle_release(dev(2));
    return NULL;
}

char *slurp(const char *path)
{
    static char *text;
    free(text);
    text = cgtest_read_file(path, NULL);
    return text;
}
