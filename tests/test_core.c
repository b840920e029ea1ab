/* Behaviour tests of the runtime through the generated toy layer. The test
 * binary links libcallguard_toy.so in place of the toy library, as a user
 * links a layer in place of the vendor library. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <toy.h>
#include <dirent.h>
#include <unistd.h>

#include "../src/runtime/stats.h"

static toy_device_t dev(uint32_t i)
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

static int run_race(int nthreads, int devices, uint32_t sleep_us)
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
static int child_compile_race(int argc, char **argv)
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

static int test_unserialized_compile_race_aborts(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    const char *args[] = {"plain", NULL};
    CHECK(cgtest_child(&r, NULL, "child_compile_race", args) == 0);
    CHECKF(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT, "status 0x%x, stderr: %s", r.status, r.err);
    return 0;
}

static int test_serialized_compile_race_finishes(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    const char *api[] = {"api", NULL};
    CHECK(cgtest_child(&r, NULL, "child_compile_race", api) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "C API: status 0x%x, stderr: %s", r.status, r.err);
    CHECK(strstr(r.out, "compiles=8 max_inside=1"));

    const char *env[] = {"CALLGUARD_SERIALIZE=toyCompile", NULL};
    const char *plain[] = {"plain", NULL};
    CHECK(cgtest_child(&r, env, "child_compile_race", plain) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "env: status 0x%x, stderr: %s", r.status, r.err);

    char path[512];
    snprintf(path, sizeof path, "%s/serialize.ini", cgtest_tmpdir());
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs("[toyCompile]\nserialize = igc\n", f);
    fclose(f);
    char var[600];
    snprintf(var, sizeof var, "CALLGUARD_POLICY=%s", path);
    const char *penv[] = {var, NULL};
    CHECK(cgtest_child(&r, penv, "child_compile_race", plain) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "policy file: status 0x%x, stderr: %s", r.status, r.err);
    return 0;
}

/* ---- handle scope -------------------------------------------------------------- */

static int test_handle_scope_serializes_per_handle(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_serialize("toyCompile", "per-device", CG_SCOPE_HANDLE) == CG_OK);
    toyResetStats();
    /* 8 threads over 2 devices: would abort if two met on one device. */
    CHECK(run_race(8, 2, 30000) == 0);
    toy_stats_t st;
    toyGetStats(&st);
    CHECK(st.compiles == 8);
    CHECKF(st.max_inside == 2, "max_inside %u: two devices should compile at once", st.max_inside);
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

/* ---- nesting ----------------------------------------------------------------- */

static void TOY_APICALL nested_callback(toy_device_t d, void *user)
{
    toy_program_t p = NULL;
    /* Same domain as the outer call: would deadlock if not passed straight through. */
    *(int *)user = toyCompile(d, "inner", 0, &p) == TOY_SUCCESS && toyNop(7) == 7;
    toyProgramRelease(p);
}

static int test_nested_call_does_not_deadlock(int argc, char **argv)
{
    (void)argc, (void)argv;
    alarm(20);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_serialize("toyRunCallback", "d", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyCompile", "d", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyNop", "d", CG_SCOPE_PROCESS) == CG_OK);
    int ok = 0;
    CHECK(toyRunCallback(dev(0), nested_callback, &ok) == TOY_SUCCESS);
    CHECK(ok == 1);
    cg_site_stats s;
    CHECK(cg_get_stats("toyCompile", &s) == CG_OK);
    CHECK(s.calls == 1 && s.nested == 1);
    CHECK(cg_get_stats("toyNop", &s) == CG_OK);
    CHECK(s.calls == 1 && s.nested == 1);
    CHECK(cg_get_stats("toyRunCallback", &s) == CG_OK);
    CHECK(s.calls == 1 && s.nested == 0);
    return 0;
}

/* ---- exact statistics -------------------------------------------------------- */

#define STATS_THREADS 16
#define STATS_CALLS 100000

static pthread_barrier_t stats_start;

static void *stats_thread(void *arg)
{
    (void)arg;
    int32_t sum;
    pthread_barrier_wait(&stats_start);
    for (int i = 0; i < STATS_CALLS; i++)
        toyAdd(i, 1, (i % 10 == 0) ? NULL : &sum); /* every 10th is an error */
    return NULL;
}

static int test_stats_exact_under_contention(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    pthread_t t[STATS_THREADS];
    pthread_barrier_init(&stats_start, NULL, STATS_THREADS);
    for (int i = 0; i < STATS_THREADS; i++)
        pthread_create(&t[i], NULL, stats_thread, NULL);
    for (int i = 0; i < STATS_THREADS; i++)
        pthread_join(t[i], NULL);
    cg_site_stats s;
    CHECK(cg_get_stats("toyAdd", &s) == CG_OK);
    CHECKF(s.calls == (uint64_t)STATS_THREADS * STATS_CALLS, "calls %lu", (unsigned long)s.calls);
    CHECKF(s.errors == (uint64_t)STATS_THREADS * STATS_CALLS / 10, "errors %lu", (unsigned long)s.errors);
    CHECK(s.nested == 0);
    CHECK(s.max_ns > 0 && s.total_ns >= s.max_ns);
    return 0;
}

/* ---- a policy changed while threads call ------------------------------------ */

enum { PHASE_FREE, PHASE_DRAIN, PHASE_SHARED, PHASE_STOP };
static atomic_int live_phase;
static atomic_int live_acks;
static atomic_int live_drain_gen; /* each drain is acknowledged once per compiler */
static atomic_long live_calls;

static int my_holds(void) { return 1; }
static void my_outside(void (*fn)(void *), void *arg) { fn(arg); }
static const cg_adapter my_adapter = {"test", my_holds, my_outside};

static void *live_compiler(void *arg)
{
    int id = (int)(intptr_t)arg;
    int acked = 0;
    for (;;) {
        int ph = atomic_load(&live_phase);
        if (ph == PHASE_STOP) break;
        if (ph == PHASE_DRAIN) {
            int gen = atomic_load(&live_drain_gen);
            if (acked != gen) atomic_fetch_add(&live_acks, 1);
            acked = gen;
            sched_yield();
            continue;
        }
        toy_program_t p = NULL;
        /* Shared phase: every thread compiles on device 0, safe only while serialized. */
        toy_device_t d = dev(ph == PHASE_SHARED ? 0u : (uint32_t)id);
        if (toyCompile(d, "k", 200, &p) == TOY_SUCCESS) toyProgramRelease(p);
        atomic_fetch_add(&live_calls, 1);
    }
    return NULL;
}

static void *live_caller(void *arg)
{
    (void)arg;
    int32_t sum;
    while (atomic_load(&live_phase) != PHASE_STOP) {
        toyAdd(1, 2, &sum);
        toyNop(1);
        atomic_fetch_add(&live_calls, 1);
    }
    return NULL;
}

static void live_drain(int ncompilers)
{
    atomic_store(&live_acks, 0);
    atomic_fetch_add(&live_drain_gen, 1);
    atomic_store(&live_phase, PHASE_DRAIN);
    while (atomic_load(&live_acks) < ncompilers)
        sched_yield();
}

static int test_policy_change_while_calling(int argc, char **argv)
{
    (void)argc, (void)argv;
    enum { NC = 4, NA = 4 };
    pthread_t t[NC + NA];
    atomic_store(&live_phase, PHASE_FREE);
    for (int i = 0; i < NC; i++)
        pthread_create(&t[i], NULL, live_compiler, (void *)(intptr_t)i);
    for (int i = 0; i < NA; i++)
        pthread_create(&t[NC + i], NULL, live_caller, NULL);
    double end = cgtest_now() + 1.5;
    int rounds = 0;
    while (cgtest_now() < end) {
        /* Serialize, then let every compiler share one device (after the
         * unserialized calls on their own devices have finished). */
        live_drain(NC);
        CHECK(cg_serialize("toyCompile", rounds % 2 ? "a" : "b", CG_SCOPE_PROCESS) == CG_OK);
        atomic_store(&live_phase, PHASE_SHARED);
        CHECK(cg_stats_enable(rounds % 3 == 0) == CG_OK);
        CHECK(cg_set_adapter(rounds % 2 ? &my_adapter : NULL, CG_ADAPTER_ACTIVE) == CG_OK);
        CHECK(cg_set_transition("toyAdd", (cg_transition)(rounds % 3)) == CG_OK);
        CHECK(cg_serialize("toyAdd", rounds % 2 ? "adds" : NULL, CG_SCOPE_PROCESS) == CG_OK);
        cgtest_sleep_ms(20);
        /* Back to one device each before the lock goes away. */
        live_drain(NC);
        CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
        atomic_store(&live_phase, PHASE_FREE);
        cgtest_sleep_ms(10);
        rounds++;
    }
    atomic_store(&live_phase, PHASE_STOP);
    for (int i = 0; i < NC + NA; i++)
        pthread_join(t[i], NULL);
    CHECK(cg_set_adapter(NULL, CG_ADAPTER_DETECT) == CG_OK);
    CHECK(rounds > 5 && atomic_load(&live_calls) > 1000);
    return 0;
}

/* One value naming a not-yet-loaded entry point twice: kept once, and the
 * CG_PENDING message is intact (it was read from a freed setting; found by
 * tests/fuzz/fuzz_env.c). */
static int test_same_name_twice_in_one_value_is_kept(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_configure("CALLGUARD_SERIALIZE", "lateFn,lateFn=d2") == CG_PENDING);
    CHECKF(strstr(cg_last_error(), "'lateFn'") != NULL, "message: %s", cg_last_error());
    CHECK(cg_configure("CALLGUARD_SERIALIZE", "lateFn") == CG_PENDING);
    return 0;
}

/* ---- statistics files written by a hostile program ----------------------------- */

/* A statistics file as the guarded program could leave it: a record count
 * past the file's records, strings without their NUL, terminal escapes,
 * policy values out of range, a slot pointing anywhere. The merge reads it
 * without reading past a field and prints no control character. */
static int test_hostile_statistics_file_is_checked_field_by_field(int argc, char **argv)
{
    (void)argc, (void)argv;
    char dir[512], file[600], out[600];
    snprintf(dir, sizeof dir, "%s/stats-hostile", cgtest_tmpdir());
    mkdir(dir, 0700);
    snprintf(file, sizeof file, "%s/cg-1-1.stats", dir);
    cgi_stats_region *r = calloc(1, sizeof *r);
    CHECK(r);
    memcpy(r->h.magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC);
    r->h.version = CGI_STATS_VERSION;
    r->h.max_records = 0xffffffffu;
    atomic_store(&r->h.nrecords, 0xffffffffu);
    r->h.pid = 4242;
    memset(r->h.command, 'c', sizeof r->h.command);
    memcpy(r->h.command, "\x1b]0;owned\x07\x1b[2J", 14);
    memset(r->h.host, '\x1b', sizeof r->h.host);
    for (int k = 0; k < CGI_STATS_MAX_RECORDS; k++) {
        memset(r->r[k].api, 'a', sizeof r->r[k].api);
        memset(r->r[k].name, '\x1b', sizeof r->r[k].name);
        memset(r->r[k].domain, 'd', sizeof r->r[k].domain);
        r->r[k].transition = 200, r->r[k].scope = 200, r->r[k].blocking = 7;
        atomic_store(&r->r[k].c.calls, 1);
    }
    atomic_store(&r->stall[0].valid, 1);
    memset(r->stall[0].py_file, '\x1b', sizeof r->stall[0].py_file);
    atomic_store(&r->slot[0].tid, 5);
    atomic_store(&r->slot[0].counters, (cg_counters *)(uintptr_t)0xdeadbeef);
    memset(r->slot[0].thread, '\x1b', sizeof r->slot[0].thread);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0 && write(fd, r, sizeof *r) == (ssize_t)sizeof *r);
    close(fd);
    free(r);
    for (int format = 0; format < 2; format++) {
        snprintf(out, sizeof out, "%s/hostile.%s", cgtest_tmpdir(), format ? "txt" : "json");
        CHECKF(cg_report_merge(dir, NULL, 0, out, format ? CG_REPORT_TEXT : CG_REPORT_JSON) == CG_OK, "%s",
               cg_last_error());
        FILE *f = fopen(out, "r");
        CHECK(f);
        int c, bad = 0;
        long len = 0;
        while ((c = fgetc(f)) != EOF)
            len++, bad |= c == 0x1b || c == 0x07;
        fclose(f);
        CHECKF(!bad, "no terminal control in the %s report", format ? "text" : "JSON");
        CHECK(len > 1000);
    }
    return 0;
}

/* ---- a domain changed while a call is inside ------------------------------------ */

typedef struct {
    toy_device_t dev;
    uint32_t sleep_us;
    double returned; /* read after the join */
    toy_result_t rc;
    atomic_int done; /* read while the thread runs */
} domain_call;

static void *domain_compile(void *p)
{
    domain_call *c = p;
    toy_program_t prog = NULL;
    c->rc = toyCompile(c->dev, "k", c->sleep_us, &prog);
    c->returned = cgtest_now();
    atomic_store(&c->done, 1);
    if (prog) toyProgramRelease(prog);
    return NULL;
}

/* docs/configuration.md: a call already inside finishes under the domain it
 * started with (it holds, and releases, that domain's lock); calls that
 * start after the change take the new domain's lock. So a call under the
 * old domain and one under the new can be inside together. Two devices:
 * the toy compiler races only on one device; max_inside counts all. */
static int test_domain_change_lets_the_call_inside_finish_under_its_domain(int argc, char **argv)
{
    (void)argc, (void)argv;
    toy_device_t d0, d1;
    CHECK(toyGetDevice(0, &d0) == TOY_SUCCESS && toyGetDevice(1, &d1) == TOY_SUCCESS);
    toyResetStats();
    CHECK(cg_serialize("toyCompile", "a", CG_SCOPE_PROCESS) == CG_OK);
    domain_call first = {d0, 600000, 0, -1, 0}, second = {d1, 1000, 0, -1, 0};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, domain_compile, &first);
    toy_stats_t st;
    for (int i = 0; i < 2000 && (toyGetStats(&st), st.max_inside) == 0; i++)
        cgtest_sleep_ms(1);
    CHECKF(st.max_inside == 1, "the first call is inside under domain a (max_inside %u)", st.max_inside);
    CHECK(cg_serialize("toyCompile", "b", CG_SCOPE_PROCESS) == CG_OK);
    pthread_create(&t2, NULL, domain_compile, &second);
    pthread_join(t2, NULL);
    double second_done = cgtest_now();
    toyGetStats(&st);
    CHECKF(!atomic_load(&first.done), "the call under b did not wait for the one inside under a");
    CHECKF(st.max_inside == 2, "both were inside together (max_inside %u)", st.max_inside);
    pthread_join(t1, NULL);
    CHECK(first.rc == TOY_SUCCESS && second.rc == TOY_SUCCESS && first.returned > second_done);
    /* The first call released a's lock, not b's: both domains are free. */
    for (int k = 0; k < 2; k++) {
        CHECK(cg_serialize("toyCompile", k ? "b" : "a", CG_SCOPE_PROCESS) == CG_OK);
        domain_call c = {d0, 1000, 0, -1, 0};
        domain_compile(&c);
        CHECK(c.rc == TOY_SUCCESS);
    }
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

/* ---- statistics survive abort, _exit and fork ---------------------------------- */

static int child_count_then_die(int argc, char **argv)
{
    int32_t sum;
    for (int i = 0; i < 1000; i++)
        toyAdd(1, 1, &sum);
    if (argc > 0 && strcmp(argv[0], "abort") == 0) abort();
    if (argc > 0 && strcmp(argv[0], "_exit") == 0) _exit(3);
    return 0;
}

/* Sums toyAdd calls over the statistics files in dir. */
static long stats_dir_calls(const char *dir, const char *site, int *files)
{
    long calls = 0;
    *files = 0;
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".stats")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY);
        if (fd < 0) continue;
        cgi_stats_region *r = mmap(NULL, sizeof *r, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (r == MAP_FAILED) continue;
        (*files)++;
        if (memcmp(r->h.magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC) == 0)
            for (uint32_t i = 0; i < atomic_load(&r->h.nrecords); i++)
                if (strcmp(r->r[i].name, site) == 0) calls += (long)cgi_ctr_calls(&r->r[i].c);
        munmap(r, sizeof *r);
    }
    closedir(d);
    return calls;
}

static int test_stats_survive_abort_and_exit(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *how[] = {"abort", "_exit", "return"};
    for (int i = 0; i < 3; i++) {
        char dir[512], var[600];
        snprintf(dir, sizeof dir, "%s/stats-%s", cgtest_tmpdir(), how[i]);
        CHECK(mkdir(dir, 0700) == 0);
        snprintf(var, sizeof var, "CALLGUARD_STATS_DIR=%s", dir);
        const char *env[] = {var, NULL};
        const char *args[] = {how[i], NULL};
        cgtest_result r;
        CHECK(cgtest_child(&r, env, "child_count_then_die", args) == 0);
        CHECKF(i != 0 || (WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT), "%s: 0x%x %s", how[i], r.status,
               r.err);
        CHECKF(i != 1 || (WIFEXITED(r.status) && WEXITSTATUS(r.status) == 3), "%s: 0x%x", how[i], r.status);
        int files;
        long calls = stats_dir_calls(dir, "toyAdd", &files);
        CHECKF(calls == 1000 && files == 1, "%s: %ld calls in %d files", how[i], calls, files);
    }
    return 0;
}

static void *hold_lock(void *arg)
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

static int child_fork_while_locked(int argc, char **argv)
{
    (void)argc, (void)argv;
    alarm(20);
    if (cg_serialize("toyCompile", "c", CG_SCOPE_PROCESS) != CG_OK) return 3;
    int32_t sum;
    for (int i = 0; i < 50; i++)
        toyAdd(1, 1, &sum);
    pthread_t t;
    pthread_create(&t, NULL, hold_lock, NULL);
    cgtest_sleep_ms(50); /* the other thread is inside toyCompile, holding the domain */
    pid_t pid = fork();
    if (pid == 0) {
        /* The locks the other thread held must be free here, and the counts ours. */
        toy_program_t p = NULL;
        int ok = toyCompile(dev(1), "child", 0, &p) == TOY_SUCCESS;
        ok = ok && cg_handle_hold(dev(2)) == CG_OK && cg_handle_release(dev(2)) == CG_OK;
        for (int i = 0; i < 7; i++)
            toyAdd(1, 1, &sum);
        _exit(ok ? 0 : 4);
    }
    int st;
    waitpid(pid, &st, 0);
    pthread_join(t, NULL);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 5;
}

static int test_fork_resets_locks_and_counters(int argc, char **argv)
{
    (void)argc, (void)argv;
    char dir[512], var[600];
    snprintf(dir, sizeof dir, "%s/stats-fork", cgtest_tmpdir());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(var, sizeof var, "CALLGUARD_STATS_DIR=%s", dir);
    const char *env[] = {var, NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_fork_while_locked", NULL) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status 0x%x: %s", r.status, r.err);
    int files;
    long calls = stats_dir_calls(dir, "toyAdd", &files);
    CHECKF(calls == 57 && files == 2, "%ld toyAdd calls in %d files (want 50 + 7 in 2)", calls, files);
    return 0;
}

/* ---- reports ------------------------------------------------------------------ */

static int child_some_calls(int argc, char **argv)
{
    (void)argc, (void)argv;
    int32_t sum;
    for (int i = 0; i < 10; i++)
        toyAdd(1, 1, &sum);
    toyAdd(1, 1, NULL);
    toy_program_t p;
    if (toyCompile(dev(0), "ok", 0, &p) == TOY_SUCCESS) toyProgramRelease(p);
    toyCompile(dev(0), "error", 0, &p);
    return 0;
}

static int test_report_json_and_table(int argc, char **argv)
{
    (void)argc, (void)argv;
    char path[512], var[600];
    snprintf(path, sizeof path, "%s/report.json", cgtest_tmpdir());
    snprintf(var, sizeof var, "CALLGUARD_REPORT=%s", path);
    const char *env[] = {var, "CALLGUARD_SERIALIZE=toyCompile=igc", NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_some_calls", NULL) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "0x%x %s", r.status, r.err);
    /* Parse it with a real JSON parser and check the numbers. */
    char check[2048];
    snprintf(check, sizeof check,
             "import json,sys; d=json.load(open('%s')); p=d['processes'][0]; s={x['name']:x for x in p['sites']};"
             "assert d['schema']=='callguard-report' and d['version']==1, d;"
             "assert s['toyAdd']['calls']==11 and s['toyAdd']['errors']==1, s['toyAdd'];"
             "assert s['toyCompile']['calls']==2 and s['toyCompile']['errors']==1, s['toyCompile'];"
             "assert s['toyCompile']['policy']['serialize']=='igc' and s['toyCompile']['policy']['blocking'], s;"
             "assert d['totals']['calls']==2+11+2+1 and p['pid']>0 and 'child_some_calls' in p['command'], d",
             path);
    const char *py[] = {"/usr/bin/env", "python3", "-c", check, NULL};
    CHECK(cgtest_run(&r, NULL, py) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "json check: %s", r.err);

    const char *tenv[] = {"CALLGUARD_REPORT=-", NULL};
    CHECK(cgtest_child(&r, tenv, "child_some_calls", NULL) == 0);
    CHECKF(strstr(r.err, "toyCompile") && strstr(r.err, "entry point") && strstr(r.err, "16 calls"), "table: %s",
           r.err);
    return 0;
}

/* ---- reports of long names ---------------------------------------------------- */

static char *slurp(const char *path)
{
    static char *text;
    free(text);
    text = cgtest_read_file(path, NULL);
    return text;
}

static int test_report_keeps_long_api_names(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *api = "a_thirty_one_character_api_name"; /* the longest a layer may have */
    char json[1024];
    snprintf(json, sizeof json,
             "{\"schema\": \"callguard-report\", \"version\": 1, \"processes\": [{\"pid\": 7, \"ppid\": 1, "
             "\"command\": \"x\", \"exit\": {\"state\": \"exited\", \"status\": 0}, \"sites\": [{\"api\": \"%s\", "
             "\"name\": \"myCall\", \"calls\": 3}]}]}",
             api);
    const char *in = cgtest_write_file("long.json", json);
    char out[600];
    snprintf(out, sizeof out, "%s/long.txt", cgtest_tmpdir());
    CHECKF(cg_report_convert(in, out, CG_REPORT_TEXT) == CG_OK, "%s", cg_last_error());
    char *text = slurp(out);
    CHECK(text);
    char row[128];
    snprintf(row, sizeof row, "  %s myCall", api);
    CHECKF(strstr(text, row), "the whole name in its column: %s", text);
    return 0;
}

/* ---- transitions and stalls ---------------------------------------------------- */

static atomic_int outside_calls;
static int always_holds(void) { return 1; }
static void count_outside(void (*fn)(void *), void *arg)
{
    atomic_fetch_add(&outside_calls, 1);
    fn(arg);
}
static const cg_adapter counting_adapter = {"counting", always_holds, count_outside};

static int test_transition_policy_picks_calls_to_leave(int argc, char **argv)
{
    (void)argc, (void)argv;
    toy_device_t d = dev(0);
    CHECK(cg_set_adapter(&counting_adapter, CG_ADAPTER_ACTIVE) == CG_OK);
    /* blocking: only sites the policy marks blocking (toyWait) leave the runtime. */
    CHECK(cg_set_transition(NULL, CG_TRANSITION_BLOCKING) == CG_OK);
    atomic_store(&outside_calls, 0);
    toyNop(1);
    toyWait(d, 1);
    CHECK(atomic_load(&outside_calls) == 1);
    /* always: every call; never: none. */
    CHECK(cg_set_transition(NULL, CG_TRANSITION_ALWAYS) == CG_OK);
    toyNop(1);
    toyWait(d, 1);
    CHECK(atomic_load(&outside_calls) == 3);
    CHECK(cg_set_transition("toyWait", CG_TRANSITION_NEVER) == CG_OK);
    toyWait(d, 1);
    CHECK(atomic_load(&outside_calls) == 3);
    /* A site marked blocking at run time joins the blocking set. */
    CHECK(cg_set_transition(NULL, CG_TRANSITION_BLOCKING) == CG_OK);
    CHECK(cg_set_blocking("toyNop", 1, "test says so") == CG_OK);
    toyNop(1);
    CHECK(atomic_load(&outside_calls) == 4);
    CHECK(cg_set_adapter(NULL, CG_ADAPTER_DETECT) == CG_OK);
    return 0;
}

static int test_stall_is_a_long_call_with_the_runtime_held(int argc, char **argv)
{
    (void)argc, (void)argv;
    toy_device_t d = dev(0);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_set_stall_ms(20) == CG_OK);
    /* Detect only: nothing is left, long calls made holding the runtime are stalls. */
    CHECK(cg_set_adapter(&counting_adapter, CG_ADAPTER_DETECT) == CG_OK);
    atomic_store(&outside_calls, 0);
    toyWait(d, 40);
    toyWait(d, 1);
    cg_site_stats s;
    CHECK(cg_get_stats("toyWait", &s) == CG_OK);
    CHECKF(s.calls == 2 && s.stalls == 1 && s.stall_ns >= 20000000u, "calls %lu stalls %lu", (unsigned long)s.calls,
           (unsigned long)s.stalls);
    CHECK(atomic_load(&outside_calls) == 0);
    /* Left around the call: no stall, however long. */
    CHECK(cg_set_adapter(&counting_adapter, CG_ADAPTER_ACTIVE) == CG_OK);
    toyWait(d, 40);
    CHECK(cg_get_stats("toyWait", &s) == CG_OK);
    CHECK(s.calls == 3 && s.stalls == 1 && atomic_load(&outside_calls) == 1);
    /* A wait for a domain lock held by another thread counts too. */
    CHECK(cg_set_adapter(&counting_adapter, CG_ADAPTER_DETECT) == CG_OK);
    CHECK(cg_serialize("toyCompile", "stall", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyAdd", "stall", CG_SCOPE_PROCESS) == CG_OK);
    pthread_t t;
    pthread_create(&t, NULL, hold_lock, NULL); /* holds the domain in toyCompile for 300 ms */
    cgtest_sleep_ms(50);
    int32_t sum;
    toyAdd(1, 2, &sum);
    pthread_join(t, NULL);
    CHECK(cg_get_stats("toyAdd", &s) == CG_OK);
    CHECKF(s.stalls == 1 && s.lock_wait_ns >= 100000000u, "stalls %lu lock wait %lu ns", (unsigned long)s.stalls,
           (unsigned long)s.lock_wait_ns);
    CHECK(cg_set_adapter(NULL, CG_ADAPTER_DETECT) == CG_OK);
    return 0;
}

/* ---- calls in flight and the list of stalls ------------------------------------ */

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* The toy compiler aborts when two threads are inside it: the statistics
 * file of the dead process still says which threads were inside which call,
 * and the report says it in words. */
static int test_abort_in_the_driver_leaves_its_calls_in_flight(int argc, char **argv)
{
    (void)argc, (void)argv;
    char dir[512], var[600];
    snprintf(dir, sizeof dir, "%s/stats-race", cgtest_tmpdir());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(var, sizeof var, "CALLGUARD_STATS_DIR=%s", dir);
    const char *env[] = {var, NULL}, *plain[] = {"plain", NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_compile_race", plain) == 0);
    CHECKF(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT, "status 0x%x", r.status);

    /* The file itself: slots of threads inside toyCompile. */
    DIR *d = opendir(dir);
    CHECK(d);
    struct dirent *e;
    int inside = 0, pid = 0;
    while ((e = readdir(d))) {
        if (!strstr(e->d_name, ".stats")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int fd = open(path, O_RDONLY);
        CHECK(fd >= 0);
        cgi_stats_region *reg = mmap(NULL, sizeof *reg, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        CHECK(reg != MAP_FAILED);
        CHECK(reg->h.version == CGI_STATS_VERSION);
        pid = reg->h.pid;
        for (int i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
            const cgi_slot *sl = &reg->slot[i];
            if (atomic_load(&sl->tid) <= 0 || !atomic_load(&sl->counters) || atomic_load(&sl->waiting)) continue;
            uint64_t off = (uint64_t)(uintptr_t)atomic_load(&sl->counters) - reg->h.base -
                           offsetof(cgi_stats_region, r) - offsetof(cgi_stats_record, c);
            if (strcmp(reg->r[off / sizeof(cgi_stats_record)].name, "toyCompile") == 0) inside++;
        }
        munmap(reg, sizeof *reg);
    }
    closedir(d);
    CHECKF(inside >= 2, "%d threads inside toyCompile in the file", inside);

    /* The report, told how the process died (as callguard run tells it). */
    cg_proc_exit ex = {pid, 1, SIGABRT};
    char text[600], json[600];
    snprintf(text, sizeof text, "%s/race.txt", cgtest_tmpdir());
    snprintf(json, sizeof json, "%s/race.json", cgtest_tmpdir());
    CHECKF(cg_report_merge(dir, &ex, 1, text, CG_REPORT_TEXT) == CG_OK, "%s", cg_last_error());
    CHECKF(cg_report_merge(dir, &ex, 1, json, CG_REPORT_JSON) == CG_OK, "%s", cg_last_error());
    char *t = slurp(text);
    CHECK(t);
    int n = 0;
    const char *line = strstr(t, "died of SIGABRT with ");
    CHECKF(line && sscanf(line, "died of SIGABRT with %d threads inside toyCompile", &n) == 1 && n == inside,
           "%d inside, report says: %s", inside, t);
    /* Calls that never returned are counted: the row is there. */
    CHECKF(strstr(t, "entry point") && strstr(strstr(t, "entry point"), "toyCompile"), "a toyCompile row: %s", t);
    char first[1024];
    snprintf(first, sizeof first, "%s", line);
    *strchr(first, '\n') = '\0';
    char *j = slurp(json); /* the same buffer as t */
    CHECK(j && strstr(j, "\"in_flight\": ["));
    CHECKF(count_of(strstr(j, "\"in_flight\""), "\"name\": \"toyCompile\"") == inside, "%s", j);
    /* Read back from the saved report, the table says the same. */
    char again[600];
    snprintf(again, sizeof again, "%s/race-again.txt", cgtest_tmpdir());
    CHECKF(cg_report_convert(json, again, CG_REPORT_TEXT) == CG_OK, "%s", cg_last_error());
    t = slurp(again);
    CHECKF(t && strstr(t, first), "saved report says %s too: %s", first, t);
    return 0;
}

static void *wait_long(void *arg)
{
    (void)arg;
    toyWait(dev(0), 1000);
    return NULL;
}

/* A stall, then a fork while another thread is inside toyWait: the child
 * writes its report (argv[0]), the parent its own (argv[1]). */
static int child_stall_then_fork(int argc, char **argv)
{
    if (argc < 2) return 9;
    alarm(20);
    if (cg_stats_enable(1) != CG_OK || cg_set_stall_ms(20) != CG_OK ||
        cg_set_adapter(&counting_adapter, CG_ADAPTER_DETECT) != CG_OK)
        return 3;
    toyWait(dev(0), 40); /* a stall of the parent */
    pthread_t t;
    pthread_create(&t, NULL, wait_long, NULL);
    cgtest_sleep_ms(100); /* the other thread is inside toyWait, in its slot */
    pid_t pid = fork();
    if (pid == 0) {
        int32_t sum;
        toyAdd(1, 1, &sum); /* a process with no call has no section */
        _exit(cg_report_write(argv[0], CG_REPORT_JSON) == CG_OK ? 0 : 4);
    }
    int st;
    waitpid(pid, &st, 0);
    int rc = cg_report_write(argv[1], CG_REPORT_JSON) == CG_OK && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 5;
    pthread_join(t, NULL);
    return rc;
}

/* A forked child starts with none of its parent's stalls, threads in flight
 * or counts, whether its statistics are a new file in the run's directory
 * (the file is new: nothing of it needs clearing) or private memory copied
 * from the parent (what the parent wrote is cleared). */
static int test_fork_child_starts_without_its_parents_stalls_and_threads(int argc, char **argv)
{
    (void)argc, (void)argv;
    for (int with_dir = 0; with_dir < 2; with_dir++) {
        char dir[512], var[600], child[600], parent[600];
        snprintf(dir, sizeof dir, "%s/stats-fork-stall", cgtest_tmpdir());
        if (with_dir) CHECK(mkdir(dir, 0700) == 0);
        snprintf(var, sizeof var, "CALLGUARD_STATS_DIR=%s", dir);
        snprintf(child, sizeof child, "%s/fork-child-%d.json", cgtest_tmpdir(), with_dir);
        snprintf(parent, sizeof parent, "%s/fork-parent-%d.json", cgtest_tmpdir(), with_dir);
        const char *env[] = {with_dir ? var : "CALLGUARD_STATS_DIR", NULL}, *args[] = {child, parent, NULL};
        cgtest_result r;
        CHECK(cgtest_child(&r, env, "child_stall_then_fork", args) == 0);
        CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "dir %d: status 0x%x: %s", with_dir, r.status, r.err);
        char check[2048];
        snprintf(check, sizeof check,
                 "import json; c=json.load(open('%s'))['processes'][0]; p=json.load(open('%s'))['processes'][0];"
                 "w=lambda q: [s for s in q['sites'] if s['name']=='toyWait'] or [{'calls': 0, 'stalls': 0}];"
                 "assert len(p['stalls'])==1 and [f['name'] for f in p['in_flight']]==['toyWait'], p;"
                 "assert w(p)[0]['calls']==2 and w(p)[0]['stalls']==1, w(p);"
                 "assert c['stalls']==[] and c['stalls_dropped']==0 and c['in_flight']==[], c;"
                 "assert w(c)[0]['calls']==0 and w(c)[0]['stalls']==0 and c['ppid']==p['pid'], (w(c), c['ppid'])",
                 child, parent);
        const char *py[] = {"/usr/bin/env", "python3", "-c", check, NULL};
        CHECK(cgtest_run(&r, NULL, py) == 0);
        CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "dir %d: %s", with_dir, r.err);
    }
    return 0;
}

/* Forty stalls of 1 to 40 ms: the worst 32 are kept, worst first, with the
 * thread and the runtime held; the other 8 are counted. */
static int test_stall_list_keeps_the_worst_and_counts_the_rest(int argc, char **argv)
{
    (void)argc, (void)argv;
    toy_device_t d = dev(0);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_set_stall_ms(1) == CG_OK);
    CHECK(cg_set_adapter(&counting_adapter, CG_ADAPTER_DETECT) == CG_OK);
    for (uint32_t ms = 1; ms <= 40; ms++)
        toyWait(d, (ms * 17) % 40 + 1); /* every duration once, shuffled */
    CHECK(cg_set_adapter(NULL, CG_ADAPTER_DETECT) == CG_OK);
    char json[600], text[600];
    snprintf(json, sizeof json, "%s/stalls.json", cgtest_tmpdir());
    snprintf(text, sizeof text, "%s/stalls.txt", cgtest_tmpdir());
    CHECKF(cg_report_write(json, CG_REPORT_JSON) == CG_OK, "%s", cg_last_error());
    CHECKF(cg_report_write(text, CG_REPORT_TEXT) == CG_OK, "%s", cg_last_error());
    char *j = slurp(json);
    CHECK(j);
    CHECKF(count_of(j, "\"runtime\": \"counting\"") == CGI_STATS_MAX_STALLS && strstr(j, "\"stalls_dropped\": 8"), "%s",
           j);
    /* Worst first: the first is the 40 ms one, each at least as long as the next. */
    const char *p = strstr(j, "\"stalls\": [");
    unsigned long prev = ~0ul, ns, shortest = 0;
    int n = 0;
    while ((p = strstr(p, "\"ns\": ")) && sscanf(p, "\"ns\": %lu", &ns) == 1 && n < CGI_STATS_MAX_STALLS) {
        CHECKF(ns <= prev, "stall %d: %lu ns after %lu ns", n, ns, prev);
        prev = shortest = ns, n++, p++;
    }
    CHECKF(n == CGI_STATS_MAX_STALLS && shortest >= 9000000ul, "%d stalls, shortest kept %lu ns", n, shortest);
    char tid[32];
    snprintf(tid, sizeof tid, "\"tid\": %d", (int)gettid());
    CHECKF(strstr(j, tid), "the thread that stalled: %s", tid);
    /* The table lists them before the sites, and says what to do: for the
     * runtime they held (this test's adapter), not CPython's advice. */
    char *t = slurp(text);
    CHECK(t);
    CHECKF(!strstr(t, "--release-gil"), "%s", t);
    const char *stalls = strstr(t, "40 stalls"), *todo = strstr(t, "what to do (counting): leave the runtime"),
               *table = strstr(t, "entry point");
    CHECKF(stalls && todo && table && stalls < todo && todo < table, "%s", t);
    CHECKF(strstr(t, "the worst 32 kept, 8 more not listed"), "%s", t);
    /* cg_reset_stats forgets them with the counters. */
    CHECK(cg_reset_stats() == CG_OK);
    toyNop(1); /* a call, so the process has a section */
    CHECKF(cg_report_write(json, CG_REPORT_JSON) == CG_OK, "%s", cg_last_error());
    j = slurp(json);
    CHECKF(j && !strstr(j, "\"runtime\": \"counting\"") && strstr(j, "\"stalls_dropped\": 0"), "%s", j);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"child_compile_race", child_compile_race},
    {"child_count_then_die", child_count_then_die},
    {"child_fork_while_locked", child_fork_while_locked},
    {"child_some_calls", child_some_calls},
    {"unserialized_compile_race_aborts", test_unserialized_compile_race_aborts},
    {"serialized_compile_race_finishes", test_serialized_compile_race_finishes},
    {"handle_scope_serializes_per_handle", test_handle_scope_serializes_per_handle},
    {"nested_call_does_not_deadlock", test_nested_call_does_not_deadlock},
    {"stats_exact_under_contention", test_stats_exact_under_contention},
    {"policy_change_while_calling", test_policy_change_while_calling},
    {"same_name_twice_in_one_value_is_kept", test_same_name_twice_in_one_value_is_kept},
    {"hostile_statistics_file_is_checked_field_by_field", test_hostile_statistics_file_is_checked_field_by_field},
    {"domain_change_lets_the_call_inside_finish_under_its_domain",
     test_domain_change_lets_the_call_inside_finish_under_its_domain},
    {"stats_survive_abort_and_exit", test_stats_survive_abort_and_exit},
    {"fork_resets_locks_and_counters", test_fork_resets_locks_and_counters},
    {"report_json_and_table", test_report_json_and_table},
    {"report_keeps_long_api_names", test_report_keeps_long_api_names},
    {"transition_policy_picks_calls_to_leave", test_transition_policy_picks_calls_to_leave},
    {"stall_is_a_long_call_with_the_runtime_held", test_stall_is_a_long_call_with_the_runtime_held},
    {"abort_in_the_driver_leaves_its_calls_in_flight", test_abort_in_the_driver_leaves_its_calls_in_flight},
    {"child_stall_then_fork", child_stall_then_fork},
    {"fork_child_starts_without_its_parents_stalls_and_threads",
     test_fork_child_starts_without_its_parents_stalls_and_threads},
    {"stall_list_keeps_the_worst_and_counts_the_rest", test_stall_list_keeps_the_worst_and_counts_the_rest},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
