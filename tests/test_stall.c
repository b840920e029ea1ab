/* Behaviour tests of transitions and stalls through the generated toy
 * layer: which calls leave the host runtime, what a stall is, the calls in
 * flight when the driver aborts, and the list of stalls a report keeps
 * (across a fork too). */
#define _GNU_SOURCE
#include "cgtest.h"
#include "toy_helpers.h"

#include <callguard/callguard.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/runtime/stats.h"

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
    char *flight = strstr(j, "\"in_flight\""), *end = flight ? strstr(flight, "\"in_flight_unknown_threads\"") : NULL;
    CHECK(end);
    *end = '\0'; /* the list alone: the JSON's "in_flight_groups" name the call too */
    CHECKF(count_of(flight, "\"name\": \"toyCompile\"") == inside, "%s", j);
    *end = '"';
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
 * thread and the runtime held; the other 8 are counted. Timed exactly: a
 * sampled stall is known to the watchdog's tick (docs/report.md). */
static int test_stall_list_keeps_the_worst_and_counts_the_rest(int argc, char **argv)
{
    (void)argc, (void)argv;
    toy_device_t d = dev(0);
    CHECK(cg_configure("CALLGUARD_TIMING", "exact") == CG_OK);
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
    /* Who waited for a runtime other than CPython's is not known. */
    CHECKF(count_of(j, "\"waiters\": null") == CGI_STATS_MAX_STALLS, "%s", j);
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
    /* Not known whether they blocked anyone: in the summary as such, not as harmless. */
    CHECKF(strstr(t, "  40 stalls held the runtime ") && strstr(t, "whether others waited is not known"), "%s", t);
    const char *stalls = strstr(t, "32 stalls held the runtime; whether other threads waited for it is not known"),
               *todo = strstr(t, "what to do (counting): the counting adapter set CG_ADAPTER_ACTIVE"),
               *table = strstr(t, "entry point");
    CHECKF(stalls && todo && table && stalls < todo && todo < table, "%s", t);
    CHECKF(strstr(t, "8 more stalls not listed (a process keeps its worst 32)"), "%s", t);
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
    {"transition_policy_picks_calls_to_leave", test_transition_policy_picks_calls_to_leave},
    {"stall_is_a_long_call_with_the_runtime_held", test_stall_is_a_long_call_with_the_runtime_held},
    {"abort_in_the_driver_leaves_its_calls_in_flight", test_abort_in_the_driver_leaves_its_calls_in_flight},
    {"child_stall_then_fork", child_stall_then_fork},
    {"fork_child_starts_without_its_parents_stalls_and_threads",
     test_fork_child_starts_without_its_parents_stalls_and_threads},
    {"stall_list_keeps_the_worst_and_counts_the_rest", test_stall_list_keeps_the_worst_and_counts_the_rest},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
