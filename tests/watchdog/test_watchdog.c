/* The watchdog (src/runtime/watchdog.c): counted calls read no clock and
 * count into shards their threads own, yet counts stay exact under many
 * threads; their time comes from the watchdog's sampling, a long call
 * holding the runtime is still a stall, named; CALLGUARD_TIMING=exact
 * brings the per-call clock back; and no watchdog runs without statistics. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <callguard/layer.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <toy.h>
#include <unistd.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CALLS_PER_THREAD 20000L /* sanitizer builds are 5-20 times slower */
#else
#define CALLS_PER_THREAD 1000000L
#endif
#define THREADS 64

static toy_device_t dev(uint32_t i)
{
    toy_device_t d = NULL;
    toyGetDevice(i, &d);
    return d;
}

static int always_holds(void) { return 1; }
static void run_inside(void (*fn)(void *), void *arg) { fn(arg); }
static const cg_adapter holding_adapter = {"holding", always_holds, run_inside};

/* Is a thread named callguard-wd in this process? */
static int watchdog_runs(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int found = 0;
    while (d && (e = readdir(d)) && !found) {
        char path[300], name[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(name, sizeof name, f)) found = strncmp(name, "callguard-wd", 12) == 0;
        fclose(f);
    }
    if (d) closedir(d);
    return found;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

static void TOY_APICALL sleep_callback(toy_device_t device, void *user)
{
    (void)device;
    sleep_ms(*(const long *)user);
}

static pthread_barrier_t start;

static void *caller(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (long i = 0; i < CALLS_PER_THREAD; i++) {
        toyNop((int32_t)i);
        if ((i & 7) == 0) toySetErrno(0, TOY_ERROR_TIMEOUT);        /* a state, counted in the shard */
        if ((i & 63) == 0) toySetErrno(0, TOY_ERROR_INVALID_VALUE); /* a failure */
    }
    return NULL;
}

static int test_counts_stay_exact_with_64_threads_on_the_clockless_path(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_configure("CALLGUARD_TIMING", "sampled") == CG_OK);
    CHECK(cg_stats_enable(1) == CG_OK);
    toyNop(0), toySetErrno(0, TOY_ERROR_TIMEOUT), toySetErrno(0, TOY_ERROR_INVALID_VALUE); /* resolve, name codes */
    CHECK(cg_reset_stats() == CG_OK);
    pthread_t t[THREADS];
    CHECK(pthread_barrier_init(&start, NULL, THREADS) == 0);
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, caller, NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    cg_site_stats s;
    CHECK(cg_get_stats("toyNop", &s) == CG_OK);
    CHECKF(s.calls == (uint64_t)THREADS * CALLS_PER_THREAD && s.errors == 0 && s.nested == 0,
           "toyNop: %lu calls, expected %lu", (unsigned long)s.calls, (unsigned long)THREADS * CALLS_PER_THREAD);
    uint64_t states = (uint64_t)THREADS * ((CALLS_PER_THREAD + 7) / 8);
    uint64_t errors = (uint64_t)THREADS * ((CALLS_PER_THREAD + 63) / 64);
    CHECK(cg_get_stats("toySetErrno", &s) == CG_OK);
    CHECKF(s.calls == states + errors && s.states == states && s.errors == errors,
           "toySetErrno: %lu calls %lu states %lu errors, expected %lu %lu %lu", (unsigned long)s.calls,
           (unsigned long)s.states, (unsigned long)s.errors, (unsigned long)(states + errors), (unsigned long)states,
           (unsigned long)errors);
    CHECK(watchdog_runs());
    return 0;
}

/* A callback run inside toyRunCallback: its guarded calls are nested. */
static void TOY_APICALL nested_calls(toy_device_t device, void *user)
{
    (void)device;
    for (long i = 0; i < *(const long *)user; i++)
        toyNop((int32_t)i), toySetErrno(0, TOY_ERROR_TIMEOUT);
}

/* The wrapper makes a plain counted call itself (layer.h, cg_site_counted):
 * a success, a state and a failure are each counted as such, and a call
 * made inside one (a driver callback) as nested, on the general path. */
static int test_the_wrappers_own_counted_calls_count_results_and_nesting(int argc, char **argv)
{
    (void)argc, (void)argv;
    const long n = 1000, inner = 10, outer = 100;
    long none = 0;
    toy_device_t d = dev(0);
    CHECK(cg_configure("CALLGUARD_TIMING", "sampled") == CG_OK);
    CHECK(cg_stats_enable(1) == CG_OK);
    /* Resolve the sites, name the codes, claim this thread's slot. */
    toyNop(0), toySetErrno(0, TOY_ERROR_TIMEOUT), toySetErrno(0, TOY_ERROR_INVALID_VALUE);
    CHECK(toyRunCallback(d, nested_calls, &none) == TOY_SUCCESS);
    CHECK(cg_reset_stats() == CG_OK);
    for (long i = 0; i < n; i++) {
        CHECK(toyNop((int32_t)i) == (int32_t)i);
        CHECK(toySetErrno(0, TOY_SUCCESS) == TOY_SUCCESS);
        CHECK(toySetErrno(0, TOY_ERROR_TIMEOUT) == TOY_ERROR_TIMEOUT);
        CHECK(toySetErrno(0, TOY_ERROR_INVALID_VALUE) == TOY_ERROR_INVALID_VALUE);
    }
    for (long i = 0; i < outer; i++)
        CHECK(toyRunCallback(d, nested_calls, (void *)&inner) == TOY_SUCCESS);
    cg_site_stats s;
    CHECK(cg_get_stats("toyNop", &s) == CG_OK);
    CHECKF(s.calls == n + outer * inner && s.nested == outer * inner && s.errors == 0 && s.states == 0,
           "toyNop: %lu calls %lu nested %lu errors", (unsigned long)s.calls, (unsigned long)s.nested,
           (unsigned long)s.errors);
    CHECK(cg_get_stats("toySetErrno", &s) == CG_OK);
    CHECKF(s.calls == 3 * n + outer * inner && s.states == n + outer * inner && s.errors == n &&
               s.nested == outer * inner,
           "toySetErrno: %lu calls %lu states %lu errors %lu nested", (unsigned long)s.calls, (unsigned long)s.states,
           (unsigned long)s.errors, (unsigned long)s.nested);
    CHECK(cg_get_stats("toyRunCallback", &s) == CG_OK);
    CHECKF(s.calls == outer && s.nested == 0 && s.errors == 0, "toyRunCallback: %lu calls %lu nested",
           (unsigned long)s.calls, (unsigned long)s.nested);
    return 0;
}

static int test_sampled_time_and_stalls_come_from_the_watchdog(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_set_stall_ms(20) == CG_OK);
    CHECK(cg_set_adapter(&holding_adapter, CG_ADAPTER_DETECT) == CG_OK);
    toy_device_t d = dev(0);
    long ms = 0;
    CHECK(toyRunCallback(d, sleep_callback, &ms) == TOY_SUCCESS); /* resolves the site, starts the watchdog */
    CHECK(watchdog_runs());
    CHECK(cg_reset_stats() == CG_OK);
    ms = 200;
    for (int i = 0; i < 3; i++)
        CHECK(toyRunCallback(d, sleep_callback, &ms) == TOY_SUCCESS);
    cg_site_stats s;
    CHECK(cg_get_stats("toyRunCallback", &s) == CG_OK);
    /* 600 ms in flight, sampled about every ms: wide bounds, as a loaded
     * machine may not run the watchdog for tens of ms (each tick then
     * adds the longer time since the last one to whatever is in flight). */
    CHECKF(s.calls == 3 && s.total_ns >= 150000000u && s.total_ns <= 1200000000u && s.max_ns >= 100000000u,
           "calls %lu total_ns %lu max_ns %lu", (unsigned long)s.calls, (unsigned long)s.total_ns,
           (unsigned long)s.max_ns);
    CHECKF(s.stalls == 3 && s.stall_ns >= 3 * 100000000u, "stalls %lu stall_ns %lu", (unsigned long)s.stalls,
           (unsigned long)s.stall_ns);
    /* A short call is no stall, and is not timed at all by the thread. */
    CHECK(cg_reset_stats() == CG_OK);
    ms = 0;
    CHECK(toyRunCallback(d, sleep_callback, &ms) == TOY_SUCCESS);
    CHECK(cg_get_stats("toyRunCallback", &s) == CG_OK);
    CHECKF(s.calls == 1 && s.stalls == 0, "calls %lu stalls %lu", (unsigned long)s.calls, (unsigned long)s.stalls);
    return 0;
}

/* Exact timing and no hang page (CALLGUARD_HANG_MS=off): nothing for a
 * watchdog to do. The page alone starts one (the next test). */
static int test_exact_timing_reads_the_clock_and_needs_no_watchdog(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_configure("CALLGUARD_TIMING", "exact") == CG_OK);
    CHECK(cg_configure("CALLGUARD_HANG_MS", "off") == CG_OK);
    CHECK(cg_stats_enable(1) == CG_OK);
    toy_device_t d = dev(0);
    long ms = 15;
    CHECK(toyRunCallback(d, sleep_callback, &ms) == TOY_SUCCESS);
    CHECK(toyNop(1) == 1);
    cg_site_stats s;
    CHECK(cg_get_stats("toyRunCallback", &s) == CG_OK);
    CHECKF(s.calls == 1 && s.max_ns >= 15000000u && s.total_ns == s.max_ns, "calls %lu total_ns %lu max_ns %lu",
           (unsigned long)s.calls, (unsigned long)s.total_ns, (unsigned long)s.max_ns);
    CHECK(!watchdog_runs());
    CHECK(cg_configure("CALLGUARD_TIMING", "always") == CG_EINVAL);
    return 0;
}

static int test_no_watchdog_without_statistics(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(0) == CG_OK);
    for (int i = 0; i < 1000; i++)
        toyNop(i);
    CHECK(!watchdog_runs());
    CHECK(cg_stats_enable(1) == CG_OK);
    toyNop(0);
    CHECK(watchdog_runs());
    return 0;
}

/* A forked child has no watchdog (only the forking thread is copied) and
 * starts its own at its first counted call; its counts are its own. */
static int test_forked_child_starts_its_own_watchdog(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    for (int i = 0; i < 100; i++)
        toyNop(i);
    CHECK(watchdog_runs());
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int bad = watchdog_runs();
        for (int i = 0; i < 10; i++)
            toyNop(i);
        cg_site_stats s;
        bad |= cg_get_stats("toyNop", &s) != CG_OK || s.calls != 10;
        bad |= !watchdog_runs() << 1;
        _exit(bad);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "child: status %d (1: a watchdog before its first call, or wrong counts; 2: none after)", status);
    return 0;
}

/* A program whose main thread ends with pthread_exit ends when its last
 * thread does: the watchdog, alone, ends too (about a second after the
 * last call), and keeps no process alive. */
static int test_watchdog_keeps_no_process_alive(int argc, char **argv)
{
    (void)argc, (void)argv;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        cg_stats_enable(1);
        for (int i = 0; i < 100; i++)
            toyNop(i);
        pthread_exit(NULL);
    }
    int status = 0;
    pid_t got = 0;
    for (int i = 0; i < 100 && got == 0; i++) { /* 10 s at most */
        sleep_ms(100);
        got = waitpid(pid, &status, WNOHANG);
    }
    if (got == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    CHECKF(got == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "the process still ran 10 s after its main thread ended (killed)");
    return 0;
}

/* Waits at most `seconds` for pid; kills it when it is still there. Its
 * wait status, or -1 when it had to be killed. */
static int wait_or_kill(pid_t pid, int seconds)
{
    int status = 0;
    pid_t got = 0;
    for (int i = 0; i < seconds * 10 && got == 0; i++) {
        sleep_ms(100);
        got = waitpid(pid, &status, WNOHANG);
    }
    if (got == pid) return status;
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

static void *short_caller(void *arg)
{
    (void)arg;
    for (int i = 0; i < 300; i++) {
        toyNop(i);
        sleep_ms(1);
    }
    return NULL;
}

/* The same where /proc cannot be read (a container without it: here a
 * tmpfs mounted over /proc in a mount namespace of the child's own): the
 * watchdog knows the main thread ended from its thread-specific
 * destructor, and the other callers' ends from their slots. */
static int test_watchdog_keeps_no_process_alive_where_proc_cannot_be_read(int argc, char **argv)
{
    (void)argc, (void)argv;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) _exit(77);
#if defined(__SANITIZE_ADDRESS__)
        __lsan_do_leak_check(); /* now: LeakSanitizer reads /proc at exit */
#endif
        if (mount("none", "/proc", "tmpfs", 0, NULL) != 0) _exit(77);
        DIR *d = opendir("/proc/self/task");
        if (d) _exit(3);
        cg_stats_enable(1);
        for (int i = 0; i < 100; i++)
            toyNop(i);
        pthread_t t;
        if (pthread_create(&t, NULL, short_caller, NULL) != 0) _exit(4);
        pthread_exit(NULL);
    }
    int status = wait_or_kill(pid, 10);
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        fprintf(stderr, "skipped: no mount namespace here (not root?)\n");
        return 77;
    }
    CHECKF(status != -1, "the process still ran 10 s after its main thread ended (killed)");
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %d (3: /proc readable, 4: no thread)", status);
    return 0;
}

static int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
        n++;
    return n;
}

/* A thread of the parent hangs (CALLGUARD_HANG_MS=100) and its hang is
 * reported; then the process forks, and the child writes its report at
 * once: the parent's hang is not the child's (no statistics directory:
 * the child's region is a copy of the parent's pages). argv[0]: the
 * child's report. */
static long hang_ms = 3000;
static void *hanging_caller(void *arg)
{
    (void)arg;
    toyRunCallback(dev(0), sleep_callback, &hang_ms);
    return NULL;
}

static int child_report_after_a_hang(int argc, char **argv)
{
    CHECK(argc == 1);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_configure("CALLGUARD_HANG_MS", "100") == CG_OK);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, hanging_caller, NULL) == 0);
    sleep_ms(600); /* reported after 100 ms */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        toyNop(1); /* a call of its own: the child is in its report */
        _exit(cg_report_write(argv[0], CG_REPORT_JSON) == CG_OK ? 0 : 1);
    }
    int status = wait_or_kill(pid, 30);
    CHECKF(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %d", status);
    fflush(NULL);
    _exit(0); /* the hanging thread with it */
}

static int test_forked_child_reports_none_of_its_parents_hang(int argc, char **argv)
{
    (void)argc, (void)argv;
    char path[512];
    snprintf(path, sizeof path, "%s/child.json", cgtest_tmpdir());
    static const char *const env[] = {"CALLGUARD_STATS_DIR", "CALLGUARD_HANG_MS", NULL};
    const char *args[] = {path, NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_report_after_a_hang", args) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d\n%s", r.status, r.err);
    CHECKF(count_of(r.err, "callguard: hang: end") == 1, "the parent's hang was not reported once:\n%s", r.err);
    char *json = cgtest_read_file(path, NULL);
    CHECKF(json != NULL, "no report at %s", path);
    CHECKF(strstr(json, "\"hang\": null") && !strstr(json, "\"hang\": {"), "the child's report shows a hang:\n%s",
           json);
    free(json);
    return 0;
}

/* The parent's watchdog is writing its hang block when the parent forks
 * (stderr is a full pipe: the write waits), and the child then hangs in a
 * call of its own: the child's block is its own, without the parent's
 * text before it. Writes the child's pid to stdout. */
static int child_fork_while_hang_is_written(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_configure("CALLGUARD_HANG_MS", "100") == CG_OK);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, hanging_caller, NULL) == 0);
    sleep_ms(600); /* reported after 100 ms: the watchdog waits in write(2) */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        char line[32];
        int n = snprintf(line, sizeof line, "%d\n", (int)getpid());
        if (write(1, line, (size_t)n) != n) _exit(2);
        long ms = 1500;
        toyRunCallback(dev(0), sleep_callback, &ms); /* hung after 100 ms; its block waits too */
        sleep_ms(200);
        _exit(0);
    }
    int status = wait_or_kill(pid, 30);
    CHECKF(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %d", status);
    _exit(0);
}

static int test_forked_child_writes_no_hang_text_its_parent_was_writing(int argc, char **argv)
{
    (void)argc, (void)argv;
    int err[2], out[2];
    CHECK(pipe(err) == 0 && pipe(out) == 0);
    /* Fill the pipe: the parent's hang block then waits in write(2). */
    CHECK(fcntl(err[1], F_SETFL, O_NONBLOCK) == 0);
    static char fill[4096];
    memset(fill, 'x', sizeof fill);
    size_t filled = 0;
    ssize_t n;
    while ((n = write(err[1], fill, sizeof fill)) > 0)
        filled += (size_t)n;
    while ((n = write(err[1], fill, 1)) > 0)
        filled += (size_t)n;
    CHECK(fcntl(err[1], F_SETFL, 0) == 0);
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(len > 0);
    self[len] = '\0';
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(err[1], 2), dup2(out[1], 1);
        close(err[0]), close(err[1]), close(out[0]), close(out[1]);
        unsetenv("CALLGUARD_STATS_DIR"), unsetenv("CALLGUARD_HANG_MS");
        execl(self, self, "--child", "child_fork_while_hang_is_written", (char *)NULL);
        _exit(127);
    }
    close(err[1]), close(out[1]);
    /* The child has forked when it names itself; its block is built 100 ms
     * after its call began, then waits in write(2) as its parent's does. */
    char line[32] = "";
    FILE *o = fdopen(out[0], "r");
    CHECK(o != NULL);
    int got = fgets(line, sizeof line, o) != NULL;
    fclose(o);
    if (got) sleep_ms(700);
    size_t cap = filled + 65536, have = 0;
    char *text = malloc(cap + 1);
    CHECK(text != NULL);
    while (have < cap && (n = read(err[0], text + have, cap - have)) > 0)
        have += (size_t)n;
    text[have] = '\0';
    close(err[0]);
    int status = wait_or_kill(pid, 30);
    char *after = text + (have > filled ? filled : have);
    CHECKF(got && status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d\n%s", status, after);
    char parent[64], child[64];
    snprintf(parent, sizeof parent, "callguard: hang: pid %d: ", (int)pid);
    snprintf(child, sizeof child, "callguard: hang: pid %d: ", atoi(line));
    int np = count_of(after, parent), nc = count_of(after, child);
    CHECKF(np == 1 && nc == 1, "the parent's block %d times, the child's %d times (1 each):\n%s", np, nc, after);
    free(text);
    return 0;
}

/* A program that closed stderr and opened its data file (fd 2 now) finds
 * no callguard line in it, though the hang is seen (its report says so);
 * the hang before, while fd 2 was stderr, is on stderr. argv[0]: the data
 * file; argv[1]: the report. */
static int child_hang_with_a_data_file_on_fd_2(int argc, char **argv)
{
    CHECK(argc == 2);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_configure("CALLGUARD_HANG_MS", "100") == CG_OK);
    long ms = 400;
    CHECK(toyRunCallback(dev(0), sleep_callback, &ms) == TOY_SUCCESS);
    sleep_ms(100); /* "over" */
    int saved = dup(2);
    close(2);
    int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd != 2) dprintf(saved, "the data file got fd %d, not 2\n", fd);
    CHECK(fd == 2);
    CHECK(write(fd, "data 1\n", 7) == 7);
    CHECK(toyRunCallback(dev(0), sleep_callback, &ms) == TOY_SUCCESS);
    sleep_ms(100);
    CHECK(write(fd, "data 2\n", 7) == 7);
    CHECK(close(fd) == 0);
    CHECK(cg_report_write(argv[1], CG_REPORT_JSON) == CG_OK);
    return 0;
}

static int test_hang_lines_stay_out_of_a_data_file_that_took_fd_2(int argc, char **argv)
{
    (void)argc, (void)argv;
    char data[512], report[512];
    snprintf(data, sizeof data, "%s/data.txt", cgtest_tmpdir());
    snprintf(report, sizeof report, "%s/data.json", cgtest_tmpdir());
    static const char *const env[] = {"CALLGUARD_STATS_DIR", "CALLGUARD_HANG_MS", NULL};
    const char *args[] = {data, report, NULL};
    cgtest_result r;
    CHECK(cgtest_child(&r, env, "child_hang_with_a_data_file_on_fd_2", args) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d\n%s", r.status, r.err);
    CHECKF(count_of(r.err, "callguard: hang: end") == 1, "the first hang, on stderr:\n%s", r.err);
    char *text = cgtest_read_file(data, NULL);
    CHECK(text != NULL);
    CHECKF(strcmp(text, "data 1\ndata 2\n") == 0, "the data file holds:\n%s", text);
    free(text);
    char *json = cgtest_read_file(report, NULL);
    CHECK(json != NULL);
    CHECKF(strstr(json, "\"hang\": {\"reports\": 2") != NULL, "both hangs seen:\n%s", json);
    free(json);
    return 0;
}

/* Where a program needs to stay single-threaded (unshare(CLONE_NEWUSER)
 * after a guarded call), exact timing without the hang page
 * (CALLGUARD_HANG_MS=off) starts no watchdog (docs/configuration.md,
 * CALLGUARD_TIMING). */
static int test_unshare_newuser_works_after_counted_calls_timed_exactly(int argc, char **argv)
{
    (void)argc, (void)argv;
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (cg_configure("CALLGUARD_TIMING", "exact") != CG_OK || cg_configure("CALLGUARD_HANG_MS", "off") != CG_OK ||
            cg_stats_enable(1) != CG_OK)
            _exit(2);
        for (int i = 0; i < 100; i++)
            toyNop(i);
        cg_site_stats s;
        if (cg_get_stats("toyNop", &s) != CG_OK || s.calls != 100) _exit(3);
        _exit(unshare(CLONE_NEWUSER) == 0 ? 0 : errno == EINVAL ? 4 : 77);
    }
    int status = wait_or_kill(pid, 30);
    if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        fprintf(stderr, "skipped: no user namespaces here\n");
        return 77;
    }
    CHECKF(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
           "child: status %d (4: EINVAL, the process is not single-threaded)", status);
    return 0;
}

/* Inside a blocking call: did it read the clock (the general path), and
 * are both threads inside at once (a barrier of two in the driver)? */
static pthread_barrier_t inside_both;
static _Atomic int timed_seen;
static void TOY_APICALL meet_callback(toy_device_t device, void *user)
{
    (void)device, (void)user;
    if (cg_my_slot->cg_timed) atomic_store(&timed_seen, 1);
    pthread_barrier_wait(&inside_both);
}

static void TOY_APICALL no_callback(toy_device_t device, void *user) { (void)device, (void)user; }

static void *blocking_caller(void *arg)
{
    (void)arg;
    toyNop(0); /* the thread's first counted call claims its slot (the general path) */
    for (int i = 0; i < 50; i++)
        toyRunCallback(dev(0), meet_callback, NULL);
    return NULL;
}

/* A blocking site (a launch, a compile, a wait) sampled: no clock per call
 * (the slot's call is not timed), yet its peak inside exact: two threads
 * meeting inside the driver 50 times make a peak of exactly 2, counted,
 * detected, and detected with hang reports on (CALLGUARD_HANG_MS: the entry
 * notes the runtime held) alike; with exact timing the general path reads
 * the clock. */
static int test_blocking_sites_sampled_read_no_clock_and_count_exact_peaks(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_set_blocking("toyRunCallback", 1, "the test's barrier") == CG_OK);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(toyRunCallback(dev(0), no_callback, NULL) == TOY_SUCCESS); /* resolved: its mode is computed */
    static const char *const timing[] = {"sampled", "sampled", "exact", "sampled"};
    for (int round = 0; round < 4; round++) {
        CHECK(cg_configure("CALLGUARD_TIMING", timing[round]) == CG_OK);
        /* The second and fourth rounds with an adapter that only detects
         * (CGI_PATH_DETECT), the fourth with hang reports on too. */
        CHECK(cg_set_adapter(round % 2 ? &holding_adapter : NULL, CG_ADAPTER_DETECT) == CG_OK);
        CHECK(cg_configure("CALLGUARD_HANG_MS", round == 3 ? "60000" : "off") == CG_OK);
        CHECK(cg_reset_stats() == CG_OK);
        atomic_store(&timed_seen, 0);
        CHECK(pthread_barrier_init(&inside_both, NULL, 2) == 0);
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            CHECK(pthread_create(&t[i], NULL, blocking_caller, NULL) == 0);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        pthread_barrier_destroy(&inside_both);
        cg_site_stats s;
        CHECK(cg_get_stats("toyRunCallback", &s) == CG_OK);
        CHECKF(s.calls == 100 && s.peak_inside == 2, "%s timing, round %d: %lu calls, peak inside %u, expected 100, 2",
               timing[round], round, (unsigned long)s.calls, s.peak_inside);
        int exact = round == 2;
        CHECKF(atomic_load(&timed_seen) == exact, "%s timing, round %d: a blocking call %s the clock", timing[round],
               round, exact ? "did not read" : "read");
    }
    CHECK(cg_set_adapter(NULL, CG_ADAPTER_DETECT) == CG_OK);
    CHECK(cg_configure("CALLGUARD_HANG_MS", "off") == CG_OK);
    return 0;
}

static pthread_barrier_t compile_start;
static void *compiler(void *arg)
{
    toy_device_t d = dev((uint32_t)(uintptr_t)arg); /* a device of its own: the toy compiler races on one */
    toy_program_t p;
    toyNop(0); /* the thread's first counted call claims its slot (the general path) */
    pthread_barrier_wait(&compile_start);
    for (int i = 0; i < 20; i++)
        if (toyCompile(d, "kernel", 2000, &p) == TOY_SUCCESS) toyProgramRelease(p);
    return NULL;
}

/* A site the policy marks blocking (toyCompile) takes the layer's own short
 * path when sampled (cgl_sl_NAME, cg_site_peaks): its peak inside brackets
 * the driver's own count of threads inside, and its calls are counted. */
static int test_blocking_site_peak_on_the_layers_short_path_is_the_drivers_own(int argc, char **argv)
{
    (void)argc, (void)argv;
    enum { N = 4 };
    CHECK(cg_configure("CALLGUARD_TIMING", "sampled") == CG_OK);
    CHECK(cg_stats_enable(1) == CG_OK);
    toy_program_t p;
    CHECK(toyCompile(dev(0), "kernel", 0, &p) == TOY_SUCCESS); /* resolved: its mode is computed */
    toyProgramRelease(p);
    CHECK(cg_reset_stats() == CG_OK);
    CHECK(toyResetStats() == TOY_SUCCESS);
    CHECK(pthread_barrier_init(&compile_start, NULL, N) == 0);
    pthread_t t[N];
    for (uintptr_t i = 0; i < N; i++)
        CHECK(pthread_create(&t[i], NULL, compiler, (void *)i) == 0);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&compile_start);
    toy_stats_t ts;
    CHECK(toyGetStats(&ts) == TOY_SUCCESS);
    cg_site_stats s;
    CHECK(cg_get_stats("toyCompile", &s) == CG_OK);
    /* Each thread is inside callguard's count a moment longer than inside the
     * driver's (its adds bracket the real call): never fewer, never more than N. */
    CHECKF(s.calls == N * 20 && ts.max_inside >= 2 && s.peak_inside >= ts.max_inside && s.peak_inside <= N,
           "toyCompile: %lu calls (expected %d), peak inside %u, the driver saw %u", (unsigned long)s.calls, N * 20,
           s.peak_inside, ts.max_inside);
    return 0;
}

/* A call of 1.3 s with statistics on and no hang option, timed as argv[1]
 * says; then the report, to argv[0]. */
static int child_a_call_of_a_second(int argc, char **argv)
{
    CHECK(argc == 2);
    if (strcmp(argv[1], "exact") == 0) CHECK(cg_configure("CALLGUARD_TIMING", "exact") == CG_OK);
    CHECK(cg_stats_enable(1) == CG_OK);
    long ms = 1300;
    CHECK(toyRunCallback(dev(0), sleep_callback, &ms) == TOY_SUCCESS);
    sleep_ms(300); /* the watchdog sees it returned */
    _exit(cg_report_write(argv[0], CG_REPORT_JSON) == CG_OK ? 0 : 1);
}

/* Without asking: a call in flight for a second is on the hang page (the
 * statistics file, for a reader while it lasts) with its thread, and
 * nothing goes to stderr; sampled or exact timing alike. */
static int test_a_call_in_flight_a_second_is_recorded_without_asking(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const char *const env[] = {"CALLGUARD_STATS_DIR", "CALLGUARD_HANG_MS", "CALLGUARD_TIMING", NULL};
    for (int exact = 0; exact < 2; exact++) {
        char path[512];
        snprintf(path, sizeof path, "%s/second-%d.json", cgtest_tmpdir(), exact);
        const char *args[] = {path, exact ? "exact" : "sampled", NULL};
        cgtest_result r;
        CHECK(cgtest_child(&r, env, "child_a_call_of_a_second", args) == 0);
        CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status %d\n%s", r.status, r.err);
        CHECKF(!strstr(r.err, "callguard: hang"), "hang lines on stderr without asking:\n%s", r.err);
        char *json = cgtest_read_file(path, NULL);
        CHECKF(json != NULL, "no report at %s", path);
        const char *hang = strstr(json, "\"hang\": {");
        CHECKF(hang && strstr(hang, "\"hang_ms\": 1000, \"asked\": false, \"over\": true") &&
                   strstr(hang, "\"name\": \"toyRunCallback\""),
               "%s timing: no page of the call:\n%s", args[1], json);
        free(json);
    }
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"blocking_site_peak_on_the_layers_short_path_is_the_drivers_own",
     test_blocking_site_peak_on_the_layers_short_path_is_the_drivers_own},
    {"blocking_sites_sampled_read_no_clock_and_count_exact_peaks",
     test_blocking_sites_sampled_read_no_clock_and_count_exact_peaks},
    {"watchdog_keeps_no_process_alive", test_watchdog_keeps_no_process_alive},
    {"watchdog_keeps_no_process_alive_where_proc_cannot_be_read",
     test_watchdog_keeps_no_process_alive_where_proc_cannot_be_read},
    {"forked_child_reports_none_of_its_parents_hang", test_forked_child_reports_none_of_its_parents_hang},
    {"child_report_after_a_hang", child_report_after_a_hang},
    {"forked_child_writes_no_hang_text_its_parent_was_writing",
     test_forked_child_writes_no_hang_text_its_parent_was_writing},
    {"child_fork_while_hang_is_written", child_fork_while_hang_is_written},
    {"hang_lines_stay_out_of_a_data_file_that_took_fd_2", test_hang_lines_stay_out_of_a_data_file_that_took_fd_2},
    {"child_hang_with_a_data_file_on_fd_2", child_hang_with_a_data_file_on_fd_2},
    {"unshare_newuser_works_after_counted_calls_timed_exactly",
     test_unshare_newuser_works_after_counted_calls_timed_exactly},
    {"forked_child_starts_its_own_watchdog", test_forked_child_starts_its_own_watchdog},
    {"counts_stay_exact_with_64_threads_on_the_clockless_path",
     test_counts_stay_exact_with_64_threads_on_the_clockless_path},
    {"the_wrappers_own_counted_calls_count_results_and_nesting",
     test_the_wrappers_own_counted_calls_count_results_and_nesting},
    {"sampled_time_and_stalls_come_from_the_watchdog", test_sampled_time_and_stalls_come_from_the_watchdog},
    {"exact_timing_reads_the_clock_and_needs_no_watchdog", test_exact_timing_reads_the_clock_and_needs_no_watchdog},
    {"no_watchdog_without_statistics", test_no_watchdog_without_statistics},
    {"a_call_in_flight_a_second_is_recorded_without_asking", test_a_call_in_flight_a_second_is_recorded_without_asking},
    {"child_a_call_of_a_second", child_a_call_of_a_second},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
