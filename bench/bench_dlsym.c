/* bench_dlsym.c: what a program's own global look-up costs, dlsym(RTLD_DEFAULT, NAME), for each NAME on
 * the command line; bench/bench_dlsym.sh runs it plainly and under `callguard run`, which defines dlsym
 * (src/runtime/dlsym_interpose.c). Prints one line a name: "NAME NS found|missing", the median of 21
 * rounds of N look-ups (ns a look-up). With --beside LIB, one more line: how many dlopen + dlclose of
 * LIB a second thread made while the first looked up the first NAME for a second (both take the
 * loader's lock). --load LIB: LIB opened RTLD_GLOBAL first. With --ir,
 * only N look-ups of each NAME in bench_dlsym_lookups, for callgrind's
 * --toggle-collect (bench_dlsym.sh).
 *
 *   bench_dlsym [--n N] [--load LIB] [--beside LIB] [--ir] NAME... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double lookup_ns(const char *name, long n, int *found)
{
    enum { ROUNDS = 21 };
    double t[ROUNDS];
    void *volatile sink = NULL;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns();
        for (long i = 0; i < n; i++)
            sink = dlsym(RTLD_DEFAULT, name);
        t[r] = (now_ns() - t0) / (double)n;
    }
    *found = sink != NULL;
    qsort(t, ROUNDS, sizeof *t, by_value);
    return t[ROUNDS / 2];
}

/* n look-ups of name, alone in a function for callgrind's --toggle-collect (--ir). */
__attribute__((noinline)) void *bench_dlsym_lookups(const char *name, long n)
{
    void *volatile sink = NULL;
    for (long i = 0; i < n; i++)
        sink = dlsym(RTLD_DEFAULT, name);
    return sink;
}

static atomic_int stop;

static void *open_close(void *lib)
{
    long opens = 0;
    while (!atomic_load(&stop)) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h) break;
        dlclose(h);
        opens++;
    }
    return (void *)opens;
}

/* Look-ups of `name` for a second while another thread opens and closes `lib`. */
static void beside(const char *name, const char *lib)
{
    pthread_t t;
    atomic_store(&stop, 0);
    if (pthread_create(&t, NULL, open_close, (void *)lib) != 0) return;
    long lookups = 0;
    void *volatile sink;
    for (double end = now_ns() + 1e9; now_ns() < end; lookups++)
        sink = dlsym(RTLD_DEFAULT, name);
    (void)sink;
    atomic_store(&stop, 1);
    void *opens;
    pthread_join(t, &opens);
    printf("beside %s: %ld look-ups of %s, %ld dlopen+dlclose in 1 s\n", lib, lookups, name, (long)opens);
}

int main(int argc, char **argv)
{
    long n = 100000;
    const char *lib = NULL;
    int i = 1, ir = 0;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i += 2)
        if (strcmp(argv[i], "--ir") == 0)
            ir = 1, i--;
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            n = atol(argv[i + 1]);
        else if (strcmp(argv[i], "--beside") == 0 && i + 1 < argc)
            lib = argv[i + 1];
        else if (strcmp(argv[i], "--load") == 0 && i + 1 < argc) {
            if (!dlopen(argv[i + 1], RTLD_NOW | RTLD_GLOBAL)) {
                fprintf(stderr, "bench_dlsym: %s\n", dlerror());
                return 1;
            }
        } else
            break;
    if (i >= argc || n <= 0 || strncmp(argv[i], "--", 2) == 0) {
        fprintf(stderr, "usage: bench_dlsym [--n N] [--load LIB] [--beside LIB] [--ir] NAME...\n");
        return 2;
    }
    if (ir) {
        for (int k = i; k < argc; k++)
            bench_dlsym_lookups(argv[k], n);
        return 0;
    }
    for (int k = i; k < argc; k++) {
        int found;
        double ns = lookup_ns(argv[k], n, &found);
        printf("%s %.1f %s\n", argv[k], ns, found ? "found" : "missing");
    }
    if (lib) beside(argv[i], lib);
    return 0;
}
