/* What one guarded toy call costs with statistics on when several threads
 * call at once, against the same threads on the idle path (statistics off)
 * and calling the real function directly (docs/benchmarks.md, "Several
 * threads on one site"). A benchmark, not a test: it prints figures and
 * ratios, never pass/fail.
 *
 * With statistics on, each call on the counted path (cg_enter/cg_leave,
 * src/runtime/short.c) adds to its site's shared counters (`calls` on entry,
 * `total_ns` on return) and reads `max_ns`: threads calling one site write
 * one cache line. Two kinds of row separate that line from the rest:
 *   one site   every thread calls toyNop;
 *   own sites  thread i calls the i-th of the toy API's cheap entry points
 *              (toyNop, toyTouch, toyAdd, toyQuery_v2, toyGetDevice,
 *              toySetErrno: each site has its own record, 512 bytes apart),
 *              so nothing is shared but what every call reads; only as many
 *              threads as there are such sites (NOWN).
 * Calls go through volatile function pointers, as in bench_call.c: direct =
 * the function looked up in libcgtoy.so, guarded = the same name looked up
 * in libcallguard_toy.so (the layer's exported wrapper); dladdr checks each.
 *
 * A round: the threads wait at a barrier, then at a spin gate (so that they
 * start within a few hundred ns of one another, not one futex wake-up
 * apart), each makes n calls; per call = the round's wall time (the last
 * thread's end minus the first thread's start, CLOCK_MONOTONIC) / n. n is
 * set per row and configuration so that a round lasts about ROUND_NS. The
 * three configurations of a row alternate round by round (which runs first
 * rotates); a figure is the median over the clean rounds (team_round:
 * the threads started together and none was descheduled for long; rounds
 * are run until R were clean, at most TRIES * R), +ns the median of each
 * round's paired difference (statistics on minus idle).
 *
 * Usage: bench_contention [--threads LIST] [--rounds R] [--ir FILE]
 *          LIST: thread counts, comma-separated (default 1,2,4,... up to
 *          nproc, and nproc); FILE (bench/bench_contention.sh) adds
 *          instructions per call measured by callgrind
 *        bench_contention [--threads LIST] --count
 *          under valgrind --tool=callgrind --collect-atstart=no: each row's
 *          configurations collected alone (each thread's loop of N_IR
 *          calls) and dumped as "T.KIND.CONFIG" (KIND one|own, CONFIG
 *          direct|idle|stats) */
#define _GNU_SOURCE
#include <callguard/callguard.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <toy.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#include "bench_callgrind.h"
#include "bench_util.h"

#define ROUND_NS 2e6      /* a round's target length */
#define ROUNDS_DEFAULT 51 /* odd: the median is one of them */
#define N_IR 20000L       /* calls per thread per counted round */
#define MAX_THREADS 256
#define MAX_ROWS 64

/* ---- the entry points: one loop of each shape per function -------------------- */

typedef uint32_t (*loop_fn)(long);
static volatile uint32_t sink;

static int32_t(TOY_APICALL *volatile nop_d)(int32_t), (TOY_APICALL *volatile nop_g)(int32_t);
static void(TOY_APICALL *volatile touch_d)(const void *), (TOY_APICALL *volatile touch_g)(const void *);
static toy_result_t(TOY_APICALL *volatile add_d)(int32_t, int32_t, int32_t *),
    (TOY_APICALL *volatile add_g)(int32_t, int32_t, int32_t *);
static toy_result_t(TOY_APICALL *volatile query_d)(uint32_t *), (TOY_APICALL *volatile query_g)(uint32_t *);
static toy_result_t(TOY_APICALL *volatile getdev_d)(uint32_t, toy_device_t *),
    (TOY_APICALL *volatile getdev_g)(uint32_t, toy_device_t *);
static toy_result_t(TOY_APICALL *volatile seterrno_d)(int32_t, toy_result_t),
    (TOY_APICALL *volatile seterrno_g)(int32_t, toy_result_t);

/* Each loop's outputs live on its own thread's stack: only the layer's
 * state can be shared between threads. */
#define LOOP(name, expr)                                                                                               \
    __attribute__((noinline)) static uint32_t name(long n)                                                             \
    {                                                                                                                  \
        uint32_t acc = 0;                                                                                              \
        int32_t sum = 0;                                                                                               \
        uint32_t value = 0;                                                                                            \
        toy_device_t dev = NULL;                                                                                       \
        for (long i = 0; i < n; i++)                                                                                   \
            acc += (uint32_t)(expr);                                                                                   \
        return acc + (uint32_t)sum + value + (dev != NULL);                                                            \
    }
LOOP(loop_nop_d, nop_d((int32_t)i))
LOOP(loop_nop_g, nop_g((int32_t)i))
LOOP(loop_touch_d, (touch_d(&dev), 1))
LOOP(loop_touch_g, (touch_g(&dev), 1))
LOOP(loop_add_d, add_d((int32_t)i, 1, &sum))
LOOP(loop_add_g, add_g((int32_t)i, 1, &sum))
LOOP(loop_query_d, query_d(&value))
LOOP(loop_query_g, query_g(&value))
LOOP(loop_getdev_d, getdev_d(0, &dev))
LOOP(loop_getdev_g, getdev_g(0, &dev))
LOOP(loop_seterrno_d, seterrno_d(0, TOY_SUCCESS))
LOOP(loop_seterrno_g, seterrno_g(0, TOY_SUCCESS))

typedef struct entry {
    const char *name;
    void *volatile *direct, *volatile *guarded; /* the pointers above */
    loop_fn loop_direct, loop_guarded;
} entry;

#define ENTRY(name, d, g)                                                                                              \
    {                                                                                                                  \
#name, (void *volatile *)&d, (void *volatile *)&g, loop_##d, loop_##g                                          \
    }
static const entry entries[] = {
    ENTRY(toyNop, nop_d, nop_g),
    ENTRY(toyTouch, touch_d, touch_g),
    ENTRY(toyAdd, add_d, add_g),
    ENTRY(toyQuery_v2, query_d, query_g),
    ENTRY(toyGetDevice, getdev_d, getdev_g),
    ENTRY(toySetErrno, seterrno_d, seterrno_g),
};
#define NOWN ((int)(sizeof entries / sizeof entries[0]))

/* ---- configurations --------------------------------------------------------------- */

enum { C_DIRECT, C_IDLE, C_STATS, NCONF };
static const char *const conf_key[NCONF] = {"direct", "idle", "stats"};

static void must(int rc, const char *what)
{
    if (rc != CG_OK) {
        fprintf(stderr, "bench_contention: %s: %s\n", what, cg_last_error());
        exit(1);
    }
}

static void configure(int conf) { must(cg_stats_enable(conf == C_STATS), "cg_stats_enable"); }

/* ---- the threads -------------------------------------------------------------------- */

typedef struct team {
    int nthreads, own;             /* own: thread i calls entries[i], else entries[0] */
    int conf, quit, gate, collect; /* collect: each thread collects its loop alone (callgrind) */
    long n;
    pthread_barrier_t start, done; /* nthreads + the main thread */
    _Atomic int arrived;
    pthread_t tid[MAX_THREADS];
    double t0[MAX_THREADS], t1[MAX_THREADS], cpu[MAX_THREADS];
    uint32_t acc[MAX_THREADS]; /* each thread's results, so no call can be optimized out */
} team;

typedef struct worker_arg {
    team *t;
    int i;
} worker_arg;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void relax(void)
{
#if defined(__x86_64__)
    _mm_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static void *worker(void *p)
{
    worker_arg *a = p;
    team *t = a->t;
    int i = a->i;
    for (;;) {
        pthread_barrier_wait(&t->start);
        if (t->quit) return NULL;
        const entry *e = &entries[t->own ? i : 0];
        loop_fn loop = t->conf == C_DIRECT ? e->loop_direct : e->loop_guarded;
        if (t->gate) {
            /* Everyone awake before anyone starts; a thread the scheduler
             * keeps waiting lets the others yield their core to it. */
            atomic_fetch_add_explicit(&t->arrived, 1, memory_order_acq_rel);
            for (unsigned spins = 0; atomic_load_explicit(&t->arrived, memory_order_acquire) < t->nthreads; spins++)
                if ((spins & 1023) == 1023)
                    sched_yield();
                else
                    relax();
        }
        double c0 = cpu_ns(), t0 = now_ns();
#if CG_BENCH_CALLGRIND
        /* Callgrind's collection state is each thread's own. */
        if (t->collect) CALLGRIND_TOGGLE_COLLECT;
        t->acc[i] += loop(t->n);
        if (t->collect) CALLGRIND_TOGGLE_COLLECT;
#else
        t->acc[i] += loop(t->n);
#endif
        t->t1[i] = now_ns();
        t->cpu[i] = cpu_ns() - c0;
        t->t0[i] = t0;
        pthread_barrier_wait(&t->done);
    }
}

static worker_arg args[MAX_THREADS];

static void team_start(team *t, int nthreads, int own)
{
    memset(t, 0, sizeof *t);
    t->nthreads = nthreads, t->own = own, t->gate = 1;
    if (pthread_barrier_init(&t->start, NULL, (unsigned)nthreads + 1) != 0 ||
        pthread_barrier_init(&t->done, NULL, (unsigned)nthreads + 1) != 0) {
        fprintf(stderr, "bench_contention: pthread_barrier_init failed\n");
        exit(1);
    }
    for (int i = 0; i < nthreads; i++) {
        args[i] = (worker_arg){t, i};
        int rc = pthread_create(&t->tid[i], NULL, worker, &args[i]);
        if (rc != 0) {
            fprintf(stderr, "bench_contention: pthread_create (thread %d of %d): %s\n", i + 1, nthreads, strerror(rc));
            exit(1);
        }
    }
}

/* One round in configuration conf, n calls per thread: ns per call.
 * *clean: the threads started within 1 - CLEAN of the round's wall time of
 * one another, and each was on a CPU for at least CLEAN of its own calls'
 * wall time (none was descheduled for long, as on a busy machine or with
 * more threads than CPUs; threads of an own row finish apart, each at its
 * function's pace). */
#define CLEAN 0.95
#define TRIES 4     /* rounds tried per clean round wanted, at most */
#define MIN_CLEAN 5 /* fewer clean rounds than this: the medians are over all */
static double team_round(team *t, int conf, long n, int *clean)
{
    configure(conf);
    t->conf = conf, t->n = n;
    atomic_store(&t->arrived, 0);
    pthread_barrier_wait(&t->start);
    pthread_barrier_wait(&t->done);
    double first = t->t0[0], last = t->t1[0];
    for (int i = 1; i < t->nthreads; i++) {
        if (t->t0[i] < first) first = t->t0[i];
        if (t->t1[i] > last) last = t->t1[i];
    }
    if (clean) {
        double start_last = first;
        *clean = 1;
        for (int i = 0; i < t->nthreads; i++) {
            if (t->cpu[i] < CLEAN * (t->t1[i] - t->t0[i])) *clean = 0;
            if (t->t0[i] > start_last) start_last = t->t0[i];
        }
        if (start_last - first > (1 - CLEAN) * (last - first)) *clean = 0;
    }
    return (last - first) / (double)n;
}

static void team_stop(team *t)
{
    t->quit = 1;
    pthread_barrier_wait(&t->start);
    for (int i = 0; i < t->nthreads; i++)
        pthread_join(t->tid[i], NULL);
    pthread_barrier_destroy(&t->start);
    pthread_barrier_destroy(&t->done);
    configure(C_IDLE);
}

/* ---- rows ------------------------------------------------------------------------ */

typedef struct row {
    int nthreads, own;
    double ns[NCONF], added, ir[NCONF];
    int have_ir, clean, rounds; /* rounds run, and of those clean in all three configurations (team_round) */
} row;

static row rows[MAX_ROWS];
static int nrows;

static void time_row(row *w, int rounds)
{
    team *t = malloc(sizeof *t);
    int stride = TRIES * rounds; /* v: each configuration's rounds, then the differences */
    double *v = malloc(sizeof *v * (size_t)stride * (NCONF + 1));
    int *clean = malloc(sizeof *clean * (size_t)stride);
    if (!t || !v || !clean) exit(1);
    team_start(t, w->nthreads, w->own);
    /* Warm up (each thread's first counted call claims its slot) and size
     * each configuration's round to about ROUND_NS. */
    long n[NCONF];
    for (int c = 0; c < NCONF; c++) {
        team_round(t, c, 1000, NULL);
        double per = team_round(t, c, 10000, NULL);
        n[c] = per > 0 ? (long)(ROUND_NS / per) : 1000000L;
        if (n[c] < 1000) n[c] = 1000;
        if (n[c] > 10000000L) n[c] = 10000000L;
    }
    /* Rounds until `rounds` were clean, at most TRIES times as many; the
     * medians are over the clean ones when there are at least 5, else over
     * all (the table says so). */
    w->clean = 0;
    int tried = 0, kept;
    for (; tried < stride && w->clean < rounds; tried++) {
        clean[tried] = 1;
        for (int k = 0; k < NCONF; k++) {
            int c = (tried + k) % NCONF, ok; /* which configuration runs first rotates */
            v[c * stride + tried] = team_round(t, c, n[c], &ok);
            clean[tried] &= ok;
        }
        w->clean += clean[tried];
    }
    w->rounds = tried;
    if (w->clean >= MIN_CLEAN) {
        kept = 0;
        for (int r = 0; r < tried; r++)
            if (clean[r]) {
                for (int c = 0; c < NCONF; c++)
                    v[c * stride + kept] = v[c * stride + r];
                kept++;
            }
    } else {
        kept = tried;
    }
    for (int r = 0; r < kept; r++)
        v[NCONF * stride + r] = v[C_STATS * stride + r] - v[C_IDLE * stride + r];
    for (int c = 0; c < NCONF; c++)
        w->ns[c] = cg_bench_median(v + c * stride, kept);
    w->added = cg_bench_median(v + NCONF * stride, kept);
    team_stop(t);
    free(clean);
    free(v);
    free(t);
}

#if CG_BENCH_CALLGRIND
/* Each configuration's round alone, N_IR calls on every thread: each thread
 * collects its own loop (no barrier, no gate, no clock), the dump sums
 * them. */
static void count_row(const row *w)
{
    team *t = malloc(sizeof *t);
    if (!t) exit(1);
    team_start(t, w->nthreads, w->own);
    t->gate = 0;
    for (int c = 0; c < NCONF; c++) {
        char name[64];
        team_round(t, c, 16, NULL); /* warm: slots claimed, functions resolved */
        CALLGRIND_ZERO_STATS;
        t->collect = 1;
        team_round(t, c, N_IR, NULL);
        t->collect = 0;
        snprintf(name, sizeof name, "%d.%s.%s", w->nthreads, w->own ? "own" : "one", conf_key[c]);
        CALLGRIND_DUMP_STATS_AT(name);
    }
    team_stop(t);
    free(t);
}
#endif

/* FILE: lines "T.KIND.CONFIG INSTRUCTIONS" for rounds of N_IR calls per thread. */
static void read_counts(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "bench_contention: %s: cannot read instruction counts: %s\n", path, strerror(errno));
        exit(1);
    }
    char key[64], kind[8], conf[8];
    double ir;
    int nthreads;
    while (fscanf(f, "%63s %lf", key, &ir) == 2) {
        if (sscanf(key, "%d.%7[a-z].%7[a-z]", &nthreads, kind, conf) != 3) continue;
        for (int i = 0; i < nrows; i++) {
            row *w = &rows[i];
            if (w->nthreads != nthreads || strcmp(kind, w->own ? "own" : "one") != 0) continue;
            for (int c = 0; c < NCONF; c++)
                if (strcmp(conf, conf_key[c]) == 0) {
                    w->ir[c] = ir / ((double)N_IR * nthreads);
                    w->have_ir |= 1 << c;
                }
        }
    }
    fclose(f);
}

/* ---- set-up and output -------------------------------------------------------------- */

static const char *object_of(void *p) { return cg_bench_object_of(p); }

static void *lookup(const char *soname, const char *name)
{
    return cg_bench_lookup("bench_contention", soname, name, soname);
}

static void print_machine(void)
{
    char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (strncmp(line, "model name", 10) == 0) {
                const char *colon = strchr(line, ':');
                if (colon) {
                    snprintf(model, sizeof model, "%s", colon + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        fclose(f);
    }
    cpu_set_t set;
    int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
    char tsc[160] = "no TSC: statistics take the general path (clock_gettime)";
#if defined(__x86_64__)
    unsigned a = 0, b, c, d = 0;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u) {
        __cpuid(0x80000007u, a, b, c, d);
        /* What one read costs: a counted call makes two. */
        enum { N = 1000000 };
        uint64_t acc = 0;
        double t0 = now_ns();
        for (int i = 0; i < N; i++)
            acc += __rdtsc();
        sink += (uint32_t)acc;
        snprintf(tsc, sizeof tsc, "invariant TSC: %s; rdtsc %.1f ns a read",
                 (d >> 8) & 1 ? "yes (the counted path, unless calibration rejects the TSC)"
                              : "no (statistics take the general path, clock_gettime)",
                 (now_ns() - t0) / N);
    }
#endif
    double load[3] = {0, 0, 0};
    int nl = getloadavg(load, 3);
    printf("CPU: %s; nproc %d (online %ld); %s; load %.2f\n", model, usable, sysconf(_SC_NPROCESSORS_ONLN), tsc,
           nl > 0 ? load[0] : -1.0);
}

static void print_table(int rounds)
{
    int have_ir = 0;
    for (int i = 0; i < nrows; i++)
        have_ir |= rows[i].have_ir;
    printf("ns per call = a round's wall time (first thread's start to last thread's end) / calls per thread;\n"
           "medians of %d clean rounds of about %.0f ms (at most %d tried), configurations interleaved; +ns and "
           "ratio: statistics on against the idle path (statistics off) of the same threads;\n"
           "clean: rounds in which the threads started within %.0f%% of the round of one another and none was off its "
           "CPU for more than %.0f%% of its calls' time (! = fewer than %d: the medians are over all rounds and the "
           "figures are noise)\n",
           rounds, ROUND_NS / 1e6, TRIES * rounds, (1 - CLEAN) * 100, (1 - CLEAN) * 100, MIN_CLEAN);
    printf("%7s %-5s %9s %9s %9s %8s %7s %9s %7s", "threads", "sites", "direct", "idle", "stats on", "+ns", "ratio",
           "+ns/1thr", "clean");
    if (have_ir) printf(" %8s %8s %8s", "Ir idle", "Ir stats", "+Ir");
    printf("\n");
    double one = 0;
    for (int i = 0; i < nrows; i++)
        if (rows[i].nthreads == 1) one = rows[i].added;
    for (int i = 0; i < nrows; i++) {
        const row *w = &rows[i];
        printf("%7d %-5s %9.2f %9.2f %9.2f %8.2f %6.2fx", w->nthreads, w->own ? "own" : "one", w->ns[C_DIRECT],
               w->ns[C_IDLE], w->ns[C_STATS], w->added, w->ns[C_STATS] / w->ns[C_IDLE]);
        if (one > 0)
            printf(" %8.2fx", w->added / one);
        else
            printf(" %9s", "-");
        char cl[32];
        snprintf(cl, sizeof cl, "%d/%d%s", w->clean, w->rounds, w->clean >= MIN_CLEAN ? "" : "!");
        printf(" %7s", cl);
        int both = (w->have_ir & (1 << C_IDLE)) && (w->have_ir & (1 << C_STATS));
        if (both)
            printf(" %8.1f %8.1f %8.1f", w->ir[C_IDLE], w->ir[C_STATS], w->ir[C_STATS] - w->ir[C_IDLE]);
        else if (have_ir)
            printf(" %8s %8s %8s", "-", "-", "-");
        printf("\n");
    }
    printf("sites: one = every thread calls toyNop (one record: its counters' cache line is shared); own = thread i "
           "calls its own entry point (");
    for (int i = 0; i < NOWN; i++)
        printf("%s%s", i ? ", " : "", entries[i].name);
    printf("), so only reads are shared; the toy API has %d such entry points, so no own row above %d threads\n", NOWN,
           NOWN);
}

/* LIST: comma-separated thread counts, each 1..MAX_THREADS. */
static int parse_threads(const char *list, int *out, int max)
{
    int n = 0;
    const char *p = list;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 1 || v > MAX_THREADS || (*end != ',' && *end != '\0') || n == max) {
            fprintf(stderr,
                    "bench_contention: --threads %s: expected thread counts from 1 to %d separated by commas "
                    "(at most %d), e.g. 1,2,4\n",
                    list, MAX_THREADS, max);
            exit(2);
        }
        out[n++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (n == 0) {
        fprintf(stderr, "bench_contention: --threads: an empty list (expected e.g. 1,2,4)\n");
        exit(2);
    }
    return n;
}

static void usage(const char *prog)
{
    fprintf(stderr, "usage: %s [--threads LIST] [--rounds R] [--ir FILE | --count]\n", prog);
    exit(2);
}

int main(int argc, char **argv)
{
    int counts[MAX_ROWS / 2], ncounts = 0, rounds = ROUNDS_DEFAULT, count = 0;
    const char *ir_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--count") == 0) {
            count = 1;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            ncounts = parse_threads(argv[++i], counts, MAX_ROWS / 2);
        } else if (strcmp(argv[i], "--ir") == 0 && i + 1 < argc) {
            ir_file = argv[++i];
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 10001) {
                fprintf(stderr, "bench_contention: --rounds %s: expected a whole number from 1 to 10001\n", argv[i]);
                return 2;
            }
            rounds = (int)v;
        } else {
            usage(argv[0]);
        }
    }
    if (count && ir_file) usage(argv[0]);
    if (ncounts == 0) {
        cpu_set_t set;
        int nproc = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
        if (nproc > MAX_THREADS) nproc = MAX_THREADS;
        for (int t = 1; t < nproc && ncounts < MAX_ROWS / 2 - 1; t *= 2)
            counts[ncounts++] = t;
        counts[ncounts++] = nproc;
    }
    /* Rows: one site for every count; own sites for the counts from 2 to NOWN. */
    for (int i = 0; i < ncounts; i++)
        rows[nrows++] = (row){.nthreads = counts[i]};
    for (int i = 0; i < ncounts; i++)
        if (counts[i] >= 2 && counts[i] <= NOWN) rows[nrows++] = (row){.nthreads = counts[i], .own = 1};

    /* Whatever CALLGUARD_RUNTIME says: no runtime to leave. */
    must(cg_set_runtime("none"), "cg_set_runtime(none)");
    for (int i = 0; i < NOWN; i++) {
        *entries[i].direct = lookup("libcgtoy.so", entries[i].name);
        *entries[i].guarded = lookup("libcallguard_toy.so", entries[i].name);
    }
    if ((void *)nop_g != (void *)toyNop) {
        fprintf(stderr, "bench_contention: this program's toyNop is in %s, not the layer\n", object_of((void *)toyNop));
        return 1;
    }
    for (int i = 0; i < NOWN; i++)
        sink += entries[i].loop_guarded(16); /* resolves each real function */

    if (count) {
#if CG_BENCH_CALLGRIND
        if (!RUNNING_ON_VALGRIND) {
            fprintf(stderr, "bench_contention: --count runs under valgrind --tool=callgrind --collect-atstart=no\n");
            return 2;
        }
        for (int i = 0; i < nrows; i++)
            count_row(&rows[i]);
        return 0;
#else
        fprintf(stderr, "bench_contention: built without <valgrind/callgrind.h>: no instruction counts\n");
        return 2;
#endif
    }
    print_machine();
    printf("guarded -> %s, direct -> %s\n", object_of((void *)nop_g), object_of((void *)nop_d));
    double t0 = now_ns();
    for (int i = 0; i < nrows; i++)
        time_row(&rows[i], rounds);
    if (ir_file) read_counts(ir_file);
    print_table(rounds);
    printf("(%.1f s)\n", (now_ns() - t0) / 1e9);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    printf("(a sanitizer build: these figures say nothing about callguard's cost)\n");
#endif
    return 0;
}
