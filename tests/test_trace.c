/* Behaviour tests of the timeline (CALLGUARD_TRACE) in the runtime itself,
 * with threads recording at once: run under ThreadSanitizer too (label
 * core). The command-line side (callguard run --trace, the JSON read back
 * by Python's json module) is tests/cli/test_cli_trace.py. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <toy.h>
#include <unistd.h>

#define THREADS 8
#define CALLS 5000

static pthread_barrier_t start;

static void *caller(void *arg)
{
    (void)arg;
    int32_t sum;
    pthread_barrier_wait(&start);
    for (int i = 0; i < CALLS; i++)
        toyAdd(i, 1, &sum);
    return NULL;
}

static atomic_int spinning;

/* Keeps calling until the process exits: the exit() writer reads its ring
 * while it records. */
static void *spinner(void *arg)
{
    (void)arg;
    int32_t sum;
    for (;;) {
        toyAdd(1, 1, &sum);
        atomic_store(&spinning, 1);
    }
    return NULL;
}

static int child_trace_threads(int argc, char **argv)
{
    int keep_running = argc > 0 && strcmp(argv[0], "running") == 0;
    pthread_t t[THREADS], s;
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, caller, NULL);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    if (keep_running) {
        pthread_create(&s, NULL, spinner, NULL);
        while (!atomic_load(&spinning))
            cgtest_sleep_ms(1);
    }
    return 0; /* exit() with the spinner still calling */
}

/* A plain loop: ThreadSanitizer's strstr measures the whole text each time. */
static long count_in(const char *text, const char *what)
{
    long n = 0;
    size_t len = strlen(what);
    for (const char *p = text; *p; p++)
        if (*p == *what && strncmp(p, what, len) == 0) n++, p += len - 1;
    return n;
}

static char *slurp(const char *path) { return cgtest_read_file(path, NULL); }

/* Under callguard run: each thread's ring in the process's file, merged
 * afterwards into every event of every thread. */
static int test_trace_records_every_thread_into_the_stats_dir(int argc, char **argv)
{
    (void)argc, (void)argv;
    char dir[512], var[600], out[600];
    snprintf(dir, sizeof dir, "%s/trace-dir", cgtest_tmpdir());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(var, sizeof var, "CALLGUARD_STATS_DIR=%s", dir);
    snprintf(out, sizeof out, "%s/merged.json", cgtest_tmpdir());
    const char *env[] = {var, "CALLGUARD_TRACE=/nonexistent/only-the-cli-writes-this.json", NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_trace_threads", NULL) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status 0x%x: %s", r.status, r.err);
    cg_trace_totals t;
    CHECKF(cg_trace_merge(dir, out, &t) == CG_OK, "%s", cg_last_error());
    CHECKF(t.processes == 1 && t.threads == THREADS && t.events == (uint64_t)THREADS * CALLS && t.dropped == 0,
           "%zu processes, %zu threads, %lu events, %lu dropped", t.processes, t.threads, (unsigned long)t.events,
           (unsigned long)t.dropped);
    char *json = slurp(out);
    CHECK(json);
    CHECKF(count_in(json, "\"ph\":\"X\"") == THREADS * CALLS && count_in(json, "\"thread_name\"") == THREADS,
           "%ld complete events", count_in(json, "\"ph\":\"X\""));
    free(json);
    return 0;
}

/* CALLGUARD_TRACE alone: written by exit(), even while a thread still records. */
static int test_trace_written_at_exit_while_threads_call(int argc, char **argv)
{
    (void)argc, (void)argv;
    char path[512], var[600];
    snprintf(path, sizeof path, "%s/inproc.json", cgtest_tmpdir());
    snprintf(var, sizeof var, "CALLGUARD_TRACE=%s", path);
    const char *env[] = {var, "CALLGUARD_STATS_DIR", NULL};
    const char *args[] = {"running", NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_trace_threads", args) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status 0x%x: %s", r.status, r.err);
    char *json = slurp(path);
    CHECK(json);
    long x = count_in(json, "\"ph\":\"X\"");
    CHECKF(x >= THREADS * CALLS && count_in(json, "\"thread_name\"") == THREADS + 1, "%ld complete events", x);
    CHECKF(strstr(json, "\"otherData\"") && json[strlen(json) - 2] == '}', "a whole document: ...%s",
           json + strlen(json) - 40);
    free(json);
    return 0;
}

static atomic_int inside;

static void TOY_APICALL wait_inside(toy_device_t device, void *user)
{
    (void)device, (void)user;
    atomic_store(&inside, 1);
    cgtest_sleep_ms(30000); /* the process ends first */
}

/* A thread named "stuck" whose first guarded call never returns (it has no
 * ring), and the main thread's calls; 1.5 s later (the hang page written
 * at 1 s, not as it ends) argv[0] says how the process ends: "exit"
 * (exit(): CALLGUARD_TRACE is written then) or "kill" (SIGKILL: under a
 * statistics directory, merged afterwards). */
static void *stuck(void *arg)
{
    pthread_setname_np(pthread_self(), "stuck");
    toyRunCallback(arg, wait_inside, NULL);
    return NULL;
}

static int child_dies_with_a_call_in_flight(int argc, char **argv)
{
    CHECK(argc == 1);
    int32_t sum;
    for (int i = 0; i < 3; i++)
        toyAdd(i, 1, &sum);
    toy_device_t d = NULL;
    CHECK(toyGetDevice(0, &d) == TOY_SUCCESS);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, stuck, d) == 0);
    for (int i = 0; i < 10000 && !atomic_load(&inside); i++)
        cgtest_sleep_ms(1);
    CHECK(atomic_load(&inside));
    cgtest_sleep_ms(1500);
    if (strcmp(argv[0], "kill") == 0) raise(SIGKILL);
    exit(0);
}

/* The "in_flight" event of thread "stuck" in a timeline, and its dur (us); -1 if none. */
static double flight_of(const char *json)
{
    const char *e = json ? strstr(json, "{\"ph\":\"X\",\"name\":\"toyRunCallback\",\"cat\":\"call,in_flight\"") : NULL;
    const char *end = e ? strchr(e, '\n') : NULL, *dur = e ? strstr(e, "\"dur\":") : NULL;
    if (!e || !end || !dur || dur > end || !strstr(e, "\"args\":{\"api\":\"toy\",\"in_flight\":true") ||
        strstr(e, "\"args\"") > end)
        return -1;
    return atof(dur + 6);
}

/* A process that ends with a call in flight has an event for it, from its
 * entry to the end, marked in flight, on a thread named as it was (its
 * first call: it has no ring): written by exit() (CALLGUARD_TRACE), or
 * merged from a statistics directory after SIGKILL, where the end is the
 * watchdog's last look (each millisecond; half a second of lag allowed). */
static int test_a_call_in_flight_at_the_end_is_on_the_timeline(int argc, char **argv)
{
    (void)argc, (void)argv;
    for (int kill = 0; kill < 2; kill++) {
        char dir[512], path[600], trace[700], stats[700];
        snprintf(dir, sizeof dir, "%s/flight-%d", cgtest_tmpdir(), kill);
        CHECK(mkdir(dir, 0700) == 0);
        snprintf(path, sizeof path, "%s/trace.json", dir);
        snprintf(trace, sizeof trace, "CALLGUARD_TRACE=%s", path);
        snprintf(stats, sizeof stats, "CALLGUARD_STATS_DIR=%s", dir);
        const char *env[] = {trace, kill ? stats : "CALLGUARD_STATS_DIR", "CALLGUARD_HANG_MS", NULL};
        const char *args[] = {kill ? "kill" : "exit", NULL};
        cgtest_result r;
        CHECK(cgtest_child(&r, env, "child_dies_with_a_call_in_flight", args) == 0);
        CHECKF(kill ? WIFSIGNALED(r.status) : WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status 0x%x: %s",
               r.status, r.err);
        if (kill) CHECKF(cg_trace_merge(dir, path, NULL) == CG_OK, "%s", cg_last_error());
        char *json = slurp(path);
        double us = flight_of(json);
        CHECKF(us >= (kill ? 1000000 : 1490000) && count_in(json, "\"in_flight\":true") == 1 &&
                   strstr(json, "\"name\":\"thread_name\"") && strstr(json, "\"args\":{\"name\":\"stuck\"}") &&
                   count_in(json, "\"name\":\"toyAdd\"") == 3 && strstr(json, ",\"in_flight\":1"),
               "%s: no event of the call in flight for 1.5 s (dur %.3f us):\n%s", args[0], us, json);
        free(json);
    }
    return 0;
}

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the directory's own */
}

static atomic_int lines_stop;

static void *line_caller(void *arg)
{
    (void)arg;
    int32_t sum;
    while (!atomic_load(&lines_stop))
        toyAdd(1, 2, &sum);
    return NULL;
}

/* A program that switches CALLGUARD_TRACE_LINES from file to file while
 * its threads call keeps one descriptor for the lines, not one per switch;
 * each line goes whole to one file, the last one named getting the rest. */
static int test_trace_lines_reconfigured_1000_times_keep_one_descriptor(int argc, char **argv)
{
    (void)argc, (void)argv;
    char a[512], b[512], stop[512];
    snprintf(a, sizeof a, "%s/lines-a.txt", cgtest_tmpdir());
    snprintf(b, sizeof b, "%s/lines-b.txt", cgtest_tmpdir());
    snprintf(stop, sizeof stop, "%s/lines-last.txt", cgtest_tmpdir());
    CHECKF(cg_configure("CALLGUARD_TRACE_LINES", a) == CG_OK, "%s", cg_last_error());
    int before = count_fds();
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, line_caller, NULL);
    for (int i = 0; i < 1000; i++)
        CHECKF(cg_configure("CALLGUARD_TRACE_LINES", i % 2 ? a : b) == CG_OK, "%s", cg_last_error());
    CHECKF(cg_configure("CALLGUARD_TRACE_LINES", stop) == CG_OK, "%s", cg_last_error());
    int after = count_fds();
    atomic_store(&lines_stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    CHECKF(after == before, "%d descriptors open before the 1,001 switches, %d after", before, after);
    int32_t sum;
    toyAdd(20, 22, &sum);
    CHECK(cg_trace_enable(0) == CG_OK);
    const char *files[] = {a, b, stop};
    for (int i = 0; i < 3; i++) {
        char *text = slurp(files[i]);
        CHECKF(text, "%s", files[i]);
        /* Whole lines only: "toy toyAdd CALL_NS WAIT_NS 0". */
        for (char *line = text, *nl; *line; line = nl + 1) {
            CHECKF((nl = strchr(line, '\n')) != NULL, "%s ends in a part of a line", files[i]);
            CHECKF(strncmp(line, "toy toyAdd ", 11) == 0 && nl[-1] == '0' && nl[-2] == ' ', "%s: '%.*s'", files[i],
                   (int)(nl - line), line);
        }
        CHECKF(i < 2 || count_in(text, "toy toyAdd ") >= 1, "the last file has no line: '%s'", text);
        free(text);
    }
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"child_trace_threads", child_trace_threads},
    {"trace_records_every_thread_into_the_stats_dir", test_trace_records_every_thread_into_the_stats_dir},
    {"trace_written_at_exit_while_threads_call", test_trace_written_at_exit_while_threads_call},
    {"trace_lines_reconfigured_1000_times_keep_one_descriptor",
     test_trace_lines_reconfigured_1000_times_keep_one_descriptor},
    {"child_dies_with_a_call_in_flight", child_dies_with_a_call_in_flight},
    {"a_call_in_flight_at_the_end_is_on_the_timeline", test_a_call_in_flight_at_the_end_is_on_the_timeline},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
