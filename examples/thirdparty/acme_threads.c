/* acme_threads.c: a multithreaded acme program, unaware of callguard.
 * Each of THREADS threads (default 4) compiles its own program, runs it
 * three times, waits 20 ms for the device and releases it; the compiles
 * start together. With --strict, libacme aborts when two threads are inside
 * acmeCompile at once: run it under
 *     callguard run --layer libcallguard_acme.so --serialize acmeCompile -- ./acme_threads --strict
 * and it succeeds. With --dlopen it calls the functions it finds with
 * dlopen("libacme.so.1") and dlsym, as programs that load a driver at run
 * time do (under callguard run: the layer's shim). */
#include "acme.h"
#include "acme_ext.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RUNS = 3, MAX_THREADS = 64 };

/* The API as called: linked, or looked up on a dlopen handle. */
static struct {
    __typeof__(acmeInit) *init;
    __typeof__(acmeCompile) *compile;
    __typeof__(acmeRun) *run;
    __typeof__(acmeWait) *wait;
    __typeof__(acmeRelease) *release;
    __typeof__(acmeGetBuildInfo) *build_info;
} acme = {acmeInit, acmeCompile, acmeRun, acmeWait, acmeRelease, acmeGetBuildInfo};

static int look_up_by_dlopen(void)
{
    void *h = dlopen("libacme.so.1", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "acme_threads: %s\n", dlerror());
        return -1;
    }
    void *f[5];
    const char *names[5] = {"acmeInit", "acmeCompile", "acmeRun", "acmeWait", "acmeRelease"};
    for (int i = 0; i < 5; i++) {
        if (!(f[i] = dlsym(h, names[i]))) {
            fprintf(stderr, "acme_threads: dlsym %s: %s\n", names[i], dlerror());
            return -1;
        }
    }
    acme.init = (__typeof__(acmeInit) *)f[0];
    acme.compile = (__typeof__(acmeCompile) *)f[1];
    acme.run = (__typeof__(acmeRun) *)f[2];
    acme.wait = (__typeof__(acmeWait) *)f[3];
    acme.release = (__typeof__(acmeRelease) *)f[4];
    /* Beyond acme.h: found too (under callguard run, in the real library
     * behind the shim); a name libacme lacks stays NULL. */
    acme.build_info = (__typeof__(acmeGetBuildInfo) *)dlsym(h, "acmeGetBuildInfo");
    if (!acme.build_info || dlsym(h, "acmeNoSuchFunction")) {
        fprintf(stderr, "acme_threads: dlsym: acmeGetBuildInfo %s, acmeNoSuchFunction %s\n",
                acme.build_info ? "found" : "missing", dlsym(h, "acmeNoSuchFunction") ? "found" : "NULL");
        return -1;
    }
    return 0;
}

static pthread_barrier_t start;
static int failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(int thread, const char *what, acme_result_t r)
{
    fprintf(stderr, "acme_threads: thread %d: %s returned %d\n", thread, what, (int)r);
    pthread_mutex_lock(&failures_lock);
    failures++;
    pthread_mutex_unlock(&failures_lock);
}

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    char source[32];
    snprintf(source, sizeof source, "kernel-%d", id);
    pthread_barrier_wait(&start);

    acme_program_t program;
    acme_result_t r = acme.compile(source, &program);
    if (r != ACME_SUCCESS) {
        fail(id, "acmeCompile", r);
        return NULL;
    }
    for (int i = 0; i < RUNS; i++) {
        int out = 0;
        r = acme.run(program, i, &out);
        if (r != ACME_SUCCESS || out != i + (int)strlen(source)) fail(id, "acmeRun", r);
    }
    if ((r = acme.wait(20)) != ACME_SUCCESS) fail(id, "acmeWait", r);
    if ((r = acme.release(program)) != ACME_SUCCESS) fail(id, "acmeRelease", r);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned flags = 0;
    int threads = 4, by_dlopen = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--strict") == 0) {
            flags |= ACME_INIT_ABORT_ON_CONCURRENT_COMPILE;
        } else if (strcmp(argv[i], "--dlopen") == 0) {
            by_dlopen = 1;
        } else {
            char *end;
            long n = strtol(argv[i], &end, 10);
            if (*end || n < 1 || n > MAX_THREADS) {
                fprintf(stderr, "usage: acme_threads [--strict] [--dlopen] [THREADS (1 to %d)]\n", MAX_THREADS);
                return 2;
            }
            threads = (int)n;
        }
    }

    if (by_dlopen && look_up_by_dlopen() != 0) return 1;
    printf("acme_threads: %s\n", acme.build_info());
    acme_result_t r = acme.init(flags);
    if (r != ACME_SUCCESS) {
        fprintf(stderr, "acme_threads: acmeInit returned %d\n", (int)r);
        return 1;
    }
    pthread_t tid[MAX_THREADS];
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (int i = 0; i < threads; i++)
        pthread_create(&tid[i], NULL, worker, (void *)(long)i);
    for (int i = 0; i < threads; i++)
        pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&start);

    if (failures) {
        fprintf(stderr, "acme_threads: %d calls failed\n", failures);
        return 1;
    }
    printf("acme_threads: %d threads compiled, ran %d times each, waited and released\n", threads, RUNS);
    return 0;
}
