/* The cost of a call checked against thread rules (--check-threads,
 * docs/threads.md) against the same call unchecked, and proof that a site
 * without rules costs nothing more (docs/design.md, "Figures to beat": at most
 * 30 ns more per checked call). A benchmark, not a test: it prints figures.
 *
 * The toy layer's toySetDims has the rules of a kernel-argument setter
 * (writes = device, sets = device: apis/toy.ini); toyNop has none. Every
 * call goes through a volatile pointer to the layer's exported wrapper.
 * Rows, each a base and a candidate:
 *   1 rules site, statistics off:   checks off          | checks on
 *   2 rules site, statistics on:    checks off          | checks on
 *   3 no-rules site, statistics off: checks off         | checks on
 *   4 no-rules site, statistics on:  checks off         | checks on
 *   5 rules site, statistics off:   locks off           | --serialize-handles
 *   6 rules site, statistics on:    locks off           | --serialize-handles
 * Rows 3 and 4 must show no difference: the site keeps its fast path
 * (statistics off: one load of site->direct) or its counted path. Rows 5
 * and 6 are the cost of a handle's lock, taken and released uncontended.
 *
 * Usage: bench_threads           time: ROUNDS interleaved rounds of N calls, median ns/call
 *        bench_threads --count   under valgrind --tool=callgrind --collect-atstart=no: each loop of
 *                                N_IR calls collected alone and dumped as "ROW.base" / "ROW.cand"
 *                                (bench/bench_threads.sh prints instructions/call from the dumps) */
#define _GNU_SOURCE
#include <callguard/callguard.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <toy.h>

#include "bench_callgrind.h"

#define N_TIME 100000L
#define ROUNDS 51
#define N_IR 100000L

static toy_result_t(TOY_APICALL *volatile set_dims)(toy_device_t, const uint32_t[3]) = toySetDims;
static int32_t(TOY_APICALL *volatile nop)(int32_t) = toyNop;
static toy_device_t dev;
static volatile uint32_t sink;

static void loop_rules(long n)
{
    static const uint32_t dims[3] = {1, 1, 1};
    for (long i = 0; i < n; i++)
        sink += (uint32_t)set_dims(dev, dims);
}

static void loop_plain(long n)
{
    for (long i = 0; i < n; i++)
        sink += (uint32_t)nop((int32_t)i);
}

typedef struct row {
    const char *key, *what;
    void (*loop)(long);
    int stats;
    int lock; /* the candidate serializes handles instead of checking them */
} row;

static const row rows[] = {
    {"1", "toySetDims (writes, sets), statistics off", loop_rules, 0, 0},
    {"2", "toySetDims (writes, sets), statistics on", loop_rules, 1, 0},
    {"3", "toyNop (no rules), statistics off", loop_plain, 0, 0},
    {"4", "toyNop (no rules), statistics on", loop_plain, 1, 0},
    {"5", "toySetDims locked, statistics off", loop_rules, 0, 1},
    {"6", "toySetDims locked, statistics on", loop_rules, 1, 1},
};
#define NROWS (sizeof rows / sizeof *rows)

static void setup(const row *r, int check)
{
    if (cg_stats_enable(r->stats) != CG_OK || cg_check_threads(check && !r->lock) != CG_OK ||
        cg_serialize_handles(check && r->lock) != CG_OK) {
        fprintf(stderr, "bench_threads: %s\n", cg_last_error());
        exit(1);
    }
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double timed(const row *r, int check)
{
    setup(r, check);
    r->loop(1000);
    double t0 = now_ns();
    r->loop(N_TIME);
    return (now_ns() - t0) / N_TIME;
}

#if CG_BENCH_CALLGRIND
static void count(const row *r, int check)
{
    char name[32];
    setup(r, check);
    r->loop(16);
    CALLGRIND_ZERO_STATS;
    CALLGRIND_TOGGLE_COLLECT;
    r->loop(N_IR);
    CALLGRIND_TOGGLE_COLLECT;
    snprintf(name, sizeof name, "%s.%s", r->key, check ? "cand" : "base");
    CALLGRIND_DUMP_STATS_AT(name);
}
#endif

int main(int argc, char **argv)
{
    if (toyGetDevice(0, &dev) != TOY_SUCCESS) return 1;
    if (argc == 2 && strcmp(argv[1], "--count") == 0) {
#if CG_BENCH_CALLGRIND
        if (!RUNNING_ON_VALGRIND) {
            fprintf(stderr, "bench_threads: --count runs under valgrind --tool=callgrind --collect-atstart=no\n");
            return 2;
        }
        for (size_t i = 0; i < NROWS; i++)
            count(&rows[i], 0), count(&rows[i], 1);
        return 0;
#else
        fprintf(stderr, "bench_threads: built without valgrind/callgrind.h\n");
        return 2;
#endif
    }
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--count]\n", argv[0]);
        return 2;
    }
    printf("%-44s %12s %12s %12s\n", "row (median of interleaved rounds)", "unchecked ns", "checked ns", "added ns");
    for (size_t i = 0; i < NROWS; i++) {
        double base[ROUNDS], cand[ROUNDS], added[ROUNDS];
        for (int k = 0; k < ROUNDS; k++) {
            base[k] = timed(&rows[i], 0);
            cand[k] = timed(&rows[i], 1);
            added[k] = cand[k] - base[k];
        }
        qsort(base, ROUNDS, sizeof *base, by_value);
        qsort(cand, ROUNDS, sizeof *cand, by_value);
        qsort(added, ROUNDS, sizeof *added, by_value);
        printf("%s %-42s %12.2f %12.2f %12.2f\n", rows[i].key, rows[i].what, base[ROUNDS / 2], cand[ROUNDS / 2],
               added[ROUNDS / 2]);
    }
    return 0;
}
