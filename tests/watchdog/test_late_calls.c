/* Late calls (src/runtime/hang.c, docs/report.md "Late calls"): a call in
 * flight for the hang threshold that then returned is kept in the report
 * with its entry point, duration and thread, whether the watchdog finds
 * it returned at its next tick or the process exits first; a process keeps
 * the slowest CGI_LATE_MAX and counts the rest. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <toy.h>
#include <unistd.h>

static toy_device_t dev0(void)
{
    toy_device_t d = NULL;
    toyGetDevice(0, &d);
    return d;
}

static void TOY_APICALL nap_callback(toy_device_t device, void *user)
{
    (void)device;
    cgtest_sleep_ms((unsigned)*(const long *)user);
}

/* The "late_calls" array of a report and what follows it; NULL if none. */
static const char *late_of(const char *json) { return json ? strstr(json, "\"late_calls\": [") : NULL; }

/* Entries of the late_calls array at `late`. */
static int late_entries(const char *late)
{
    const char *end = strstr(late, "\"late_calls_dropped\"");
    int n = 0;
    for (const char *p = late; end && (p = strstr(p, "\"duration_ms\": ")) && p < end; p++)
        n++;
    return n;
}

/* The duration_ms of the k-th late call at `late`; -1 if none. */
static long late_ms(const char *late, int k)
{
    const char *p = late;
    for (int i = 0; i <= k; i++)
        if (!(p = strstr(p + 1, "\"duration_ms\": "))) return -1;
    return atol(p + strlen("\"duration_ms\": "));
}

/* Statistics on, no hang option, timing as argv[1]: a call of 1.2 s on
 * the main thread named "late-caller"; then argv[2] "wait": the report,
 * to argv[0], after a moment (the watchdog's tick finds it returned), or
 * "exit": exit() at once, whose handlers write it (CALLGUARD_REPORT). */
static int child_a_late_call(int argc, char **argv)
{
    CHECK(argc == 3);
    prctl(PR_SET_NAME, "late-caller", 0, 0, 0);
    if (strcmp(argv[1], "exact") == 0) CHECK(cg_configure("CALLGUARD_TIMING", "exact") == CG_OK);
    CHECK(cg_stats_enable(1) == CG_OK);
    long ms = 1200;
    CHECK(toyRunCallback(dev0(), nap_callback, &ms) == TOY_SUCCESS);
    if (strcmp(argv[2], "exit") == 0) exit(0);
    cgtest_sleep_ms(100);
    _exit(cg_report_write(argv[0], CG_REPORT_JSON) == CG_OK ? 0 : 1);
}

/* The call of 1.2 s is in the report's late_calls: its entry point, a
 * duration of about 1.2 s and its thread; sampled or exact, reported
 * after the watchdog looked again or at once by exit(). */
static int test_a_call_that_returned_after_the_hang_threshold_is_kept_with_its_thread(int argc, char **argv)
{
    (void)argc, (void)argv;
    for (int exact = 0; exact < 2; exact++)
        for (int at_exit = 0; at_exit < 2; at_exit++) {
            char path[512], report[600];
            snprintf(path, sizeof path, "%s/late-%d-%d.json", cgtest_tmpdir(), exact, at_exit);
            snprintf(report, sizeof report, "CALLGUARD_REPORT=%s", path);
            const char *env[] = {"CALLGUARD_STATS_DIR", "CALLGUARD_HANG_MS", "CALLGUARD_TIMING",
                                 at_exit ? report : "CALLGUARD_REPORT", NULL};
            const char *args[] = {path, exact ? "exact" : "sampled", at_exit ? "exit" : "wait", NULL};
            cgtest_result r;
            CHECK(cgtest_child(&r, env, "child_a_late_call", args) == 0);
            CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d\n%s", r.status, r.err);
            char *json = cgtest_read_file(path, NULL);
            const char *late = late_of(json);
            long ms = late ? late_ms(late, 0) : -1;
            CHECKF(late && late_entries(late) == 1 &&
                       strstr(late, "{\"api\": \"toy\", \"name\": \"toyRunCallback\", \"duration_ms\": ") &&
                       ms >= 1150 && strstr(late, "\"thread\": \"late-caller\"") &&
                       strstr(late, "\"late_calls_dropped\": 0"),
                   "%s timing, %s: the late call (%ld ms) is not kept:\n%s", args[1], args[2], ms,
                   json ? json : "(no report)");
            free(json);
        }
    return 0;
}

/* Ten calls of 100 to 370 ms, 30 ms apart, in no order, over a hang
 * threshold of 40 ms (the watchdog has 60 ms or more to see each one
 * past it); the report to argv[0]. */
static int child_ten_late_calls(int argc, char **argv)
{
    CHECK(argc == 1);
    CHECK(cg_stats_enable(1) == CG_OK);
    static const long ms[] = {220, 100, 370, 130, 340, 160, 310, 190, 280, 250};
    for (int i = 0; i < 10; i++)
        CHECK(toyRunCallback(dev0(), nap_callback, (void *)&ms[i]) == TOY_SUCCESS);
    cgtest_sleep_ms(100);
    _exit(cg_report_write(argv[0], CG_REPORT_JSON) == CG_OK ? 0 : 1);
}

/* A process keeps the 8 slowest late calls, slowest first (the two of 100
 * and 130 ms left out: each kept one took 150 ms or more), and counts the
 * two others as dropped. */
static int test_the_slowest_late_calls_are_kept_and_the_others_counted(int argc, char **argv)
{
    (void)argc, (void)argv;
    char path[512];
    snprintf(path, sizeof path, "%s/ten.json", cgtest_tmpdir());
    static const char *const env[] = {"CALLGUARD_STATS_DIR", "CALLGUARD_HANG_MS=40", "CALLGUARD_TIMING",
                                      "CALLGUARD_REPORT", NULL};
    const char *args[] = {path, NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_ten_late_calls", args) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d\n%s", r.status, r.err);
    char *json = cgtest_read_file(path, NULL);
    const char *late = late_of(json);
    int n = late ? late_entries(late) : 0, sorted = 1;
    for (int k = 1; k < n; k++)
        sorted = sorted && late_ms(late, k) <= late_ms(late, k - 1) && late_ms(late, k) >= 150;
    CHECKF(n == 8 && sorted && late_ms(late, 0) >= 360 && strstr(late, "\"late_calls_dropped\": 2"),
           "not the 8 slowest, slowest first, and 2 dropped:\n%s", json ? json : "(no report)");
    free(json);
    return 0;
}

/* The arguments a blocking call waits on (wait_args: apis/toy.ini gives toyWait's device and ms). */
static void *wait_1500(void *arg)
{
    (void)arg;
    prctl(PR_SET_NAME, "waiter", 0, 0, 0);
    toy_device_t d = NULL;
    toyGetDevice(0, &d); /* the thread's first call claims its slot */
    toyWait(d, 1500);
    return NULL;
}

/* A thread waits 1.5 s in toyWait; at 1.3 s `callguard status` of this
 * process goes to argv[1]. Then on the main thread toyRunCallback, 1.2 s,
 * a site without wait_args, after a toyWait of its own that returned at
 * once; the report (JSON) to argv[0]. */
static int child_wait_args(int argc, char **argv)
{
    CHECK(argc == 2);
    CHECK(cg_stats_enable(1) == CG_OK);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, wait_1500, NULL) == 0);
    cgtest_sleep_ms(1300);
    char stats[600] = "";
    const char *dir = getenv("CALLGUARD_STATS_DIR");
    DIR *d = dir ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, "cg-", 3) == 0) snprintf(stats, sizeof stats, "%s/%s", dir, e->d_name);
    if (d) closedir(d);
    const char *paths[] = {stats};
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CHECKF(stats[0] && fd >= 0 && cg_status_write(paths, 1, "here", fd, CG_REPORT_TEXT) == CG_OK, "status of %s",
           stats);
    close(fd);
    pthread_join(t, NULL);
    CHECK(toyWait(dev0(), 0) == TOY_SUCCESS);
    long ms = 1200;
    CHECK(toyRunCallback(dev0(), nap_callback, &ms) == TOY_SUCCESS);
    cgtest_sleep_ms(100);
    _exit(cg_report_write(argv[0], CG_REPORT_JSON) == CG_OK ? 0 : 1);
}

/* `callguard status` names toyWait's device and ms while it waits; the
 * report keeps them with the late call; the later toyRunCallback, which
 * keeps none, shows none (not the values toyWait left in the slot). */
static int test_a_blocking_calls_arguments_are_named_live_and_in_late_calls(int argc, char **argv)
{
    (void)argc, (void)argv;
    char path[512], status[512], dir[512], stats[600];
    snprintf(path, sizeof path, "%s/args.json", cgtest_tmpdir());
    snprintf(status, sizeof status, "%s/args-status.txt", cgtest_tmpdir());
    snprintf(dir, sizeof dir, "%s/args-stats", cgtest_tmpdir());
    snprintf(stats, sizeof stats, "CALLGUARD_STATS_DIR=%s", dir);
    CHECK(mkdir(dir, 0700) == 0);
    const char *env[] = {stats, "CALLGUARD_HANG_MS", "CALLGUARD_TIMING", "CALLGUARD_REPORT", NULL};
    const char *args[] = {path, status, NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_wait_args", args) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d\n%s", r.status, r.err);
    char *text = cgtest_read_file(status, NULL), *json = cgtest_read_file(path, NULL);
    const char *live = text ? strstr(text, "\"waiter\" in toy toyWait device=0x") : NULL;
    CHECKF(live && strstr(live, " ms=1500 for "), "status does not name toyWait's arguments:\n%s",
           text ? text : "(none)");
    const char *late = late_of(json);
    const char *w = late ? strstr(late, "\"name\": \"toyWait\"") : NULL;
    const char *cb = late ? strstr(late, "\"name\": \"toyRunCallback\"") : NULL;
    /* The same device both times: status's `device=0x...` and the report's. */
    char want[128] = "?";
    if (live) {
        const char *v = live + strlen("\"waiter\" in toy toyWait device=");
        snprintf(want, sizeof want, "\"args\": {\"device\": \"%.*s\", \"ms\": \"1500\"}", (int)strcspn(v, " "), v);
    }
    CHECKF(w && cb && strstr(w, want) && strstr(cb, "\"args\": null"),
           "late calls: toyWait with %s, toyRunCallback with none:\n%s", want, json ? json : "(no report)");
    free(text);
    free(json);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"a_blocking_calls_arguments_are_named_live_and_in_late_calls",
     test_a_blocking_calls_arguments_are_named_live_and_in_late_calls},
    {"child_wait_args", child_wait_args},
    {"a_call_that_returned_after_the_hang_threshold_is_kept_with_its_thread",
     test_a_call_that_returned_after_the_hang_threshold_is_kept_with_its_thread},
    {"child_a_late_call", child_a_late_call},
    {"the_slowest_late_calls_are_kept_and_the_others_counted",
     test_the_slowest_late_calls_are_kept_and_the_others_counted},
    {"child_ten_late_calls", child_ten_late_calls},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
