/* The hang page (src/runtime/hang.c, docs/report.md "Hangs") with more
 * calls in flight than it lists: what each reader says of the count. */
#define _GNU_SOURCE
#include "cgtest.h"
#include "toy_helpers.h"

#include <callguard/callguard.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <toy.h>
#include <unistd.h>

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* 40 threads inside a call that sleeps 3 s, more than the hang page lists
 * (CGI_HANG_MAX_CALLS, 30); CALLGUARD_HANG_MS=1000 prints the page. After
 * the first report, the report to argv[0] (JSON) and argv[1] (the table),
 * and `callguard status` of the process to argv[2]. */
#define MANY_IN_FLIGHT 40
static long many_ms = 3000;
static pthread_barrier_t start;
static _Atomic int many_inside;
static void TOY_APICALL count_and_sleep(toy_device_t device, void *user)
{
    (void)device;
    many_inside++;
    cgtest_sleep_ms((unsigned)*(const long *)user);
}
static void *many_caller(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    toyRunCallback(dev(0), count_and_sleep, &many_ms);
    return NULL;
}

static int child_many_calls_in_flight(int argc, char **argv)
{
    CHECK(argc == 3);
    CHECK(cg_stats_enable(1) == CG_OK);
    pthread_t t[MANY_IN_FLIGHT];
    pthread_barrier_init(&start, NULL, MANY_IN_FLIGHT);
    for (int i = 0; i < MANY_IN_FLIGHT; i++)
        CHECK(pthread_create(&t[i], NULL, many_caller, NULL) == 0);
    double t0 = cgtest_now();
    while (many_inside < MANY_IN_FLIGHT && cgtest_now() - t0 < 2.5)
        cgtest_sleep_ms(10);
    CHECKF(many_inside == MANY_IN_FLIGHT, "%d threads inside after 2.5 s", (int)many_inside);
    cgtest_sleep_ms(1500); /* the first is reported after 1 s */
    /* `callguard status` of this process: its statistics file, the only one in its directory. */
    char stats[600] = "";
    DIR *d = opendir(getenv("CALLGUARD_STATS_DIR"));
    for (struct dirent *e; d && (e = readdir(d));)
        if (strncmp(e->d_name, "cg-", 3) == 0)
            snprintf(stats, sizeof stats, "%s/%s", getenv("CALLGUARD_STATS_DIR"), e->d_name);
    if (d) closedir(d);
    const char *paths[] = {stats};
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    CHECKF(stats[0] && fd >= 0 && cg_status_write(paths, 1, "here", fd, CG_REPORT_TEXT) == CG_OK, "status of %s",
           stats);
    close(fd);
    fflush(NULL);
    _exit(cg_report_write(argv[0], CG_REPORT_JSON) == CG_OK && cg_report_write(argv[1], CG_REPORT_TEXT) == CG_OK ? 0
                                                                                                                 : 1);
}

/* More calls in flight than the hang page lists: the block on stderr, the
 * JSON report and the table each say how many there were, not only the 30
 * listed; so does `callguard status`, which lists 8. */
static int test_hang_report_counts_every_call_in_flight_past_those_it_lists(int argc, char **argv)
{
    (void)argc, (void)argv;
    char json_path[512], text_path[512], status_path[512], dir[512], dir_env[600];
    snprintf(json_path, sizeof json_path, "%s/many.json", cgtest_tmpdir());
    snprintf(text_path, sizeof text_path, "%s/many.txt", cgtest_tmpdir());
    snprintf(status_path, sizeof status_path, "%s/many-status.txt", cgtest_tmpdir());
    snprintf(dir, sizeof dir, "%s/many-stats", cgtest_tmpdir());
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(dir_env, sizeof dir_env, "CALLGUARD_STATS_DIR=%s", dir);
    const char *const env[] = {dir_env, "CALLGUARD_HANG_MS=1000", "CALLGUARD_TIMING", NULL};
    const char *args[] = {json_path, text_path, status_path, NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_many_calls_in_flight", args) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d\n%s", r.status, r.err);
    /* The block's first line, within 100 columns: it goes on, indented 4, after a space; joined back. */
    static const char want[] = "(CALLGUARD_HANG_MS=1000); 40 in flight (30 shown):";
    const char *head = strstr(r.err, "callguard: hang: pid "), *eol = head ? strchr(head, '\n') : NULL;
    char first[400] = "";
    if (eol && eol - head < 200) {
        snprintf(first, sizeof first, "%.*s", (int)(eol - head), head);
        const char *more = strncmp(eol + 1, "callguard: hang:     ", 21) == 0 ? eol + 22 : NULL;
        const char *end = more ? strchr(more, '\n') : NULL;
        if (end && end - more < 150)
            snprintf(first + strlen(first), sizeof first - strlen(first), " %.*s", (int)(end - more), more);
    }
    size_t n = strlen(first);
    CHECKF(eol && eol - head <= 100 && n > strlen(want) && strcmp(first + n - strlen(want), want) == 0,
           "the first block's first line:\n%s", r.err);
    CHECKF(count_of(head, ": toy toyRunCallback, ") >= 30, "30 calls listed:\n%s", r.err);
    char *json = cgtest_read_file(json_path, NULL), *text = cgtest_read_file(text_path, NULL);
    char *status = cgtest_read_file(status_path, NULL);
    CHECKF(json && strstr(json, "\"asked\": true, \"over\": false, \"in_flight_count\": 40, \"calls\": ["),
           "the JSON report's count:\n%s", json ? json : "(none)");
    CHECKF(text && strstr(text, " ms\n    40 in flight (30 shown)\n"), "the table's count:\n%s",
           text ? text : "(none)");
    CHECKF(status && strstr(status, " s\n    40 in flight (8 shown)\n"), "status:\n%s", status ? status : "(none)");
    free(json), free(text), free(status);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"hang_report_counts_every_call_in_flight_past_those_it_lists",
     test_hang_report_counts_every_call_in_flight_past_those_it_lists},
    {"child_many_calls_in_flight", child_many_calls_in_flight},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
