/* Behaviour tests of the statistics through the generated toy layer: exact
 * counts under contention, a statistics file a hostile program wrote, the
 * counts kept through abort, _exit and fork, and the reports written from
 * them (JSON and the table). */
#define _GNU_SOURCE
#include "cgtest.h"
#include "toy_helpers.h"

#include <callguard/callguard.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/runtime/stats.h"

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

/* Appends a frame record (line, file, function) at area[*off]. */
static void put_test_frame(unsigned char *area, size_t *off, int line, const char *file, const char *func)
{
    cgi_thread_frame f = {.line = line, .file_len = (uint16_t)strlen(file), .func_len = (uint16_t)strlen(func)};
    memcpy(area + *off, &f, sizeof f);
    memcpy(area + *off + sizeof f, file, f.file_len + 1u);
    memcpy(area + *off + sizeof f + f.file_len + 1, func, f.func_len + 1u);
    *off += (sizeof f + f.file_len + 1u + f.func_len + 1u + 7) / 8 * 8;
}

/* The threads area as the guarded program could leave it (an answer
 * already there for the next request): a name and a file with terminal
 * escapes, a name without its NUL, values out of range, a thread whose
 * frame count runs past its record, one whose size runs past the area.
 * `callguard status` shows the well-formed threads and nothing of the
 * rest, reads nothing past a record (ASan), prints no control character. */
static int test_hostile_threads_answer_is_checked_record_by_record(int argc, char **argv)
{
    (void)argc, (void)argv;
    char file[600], out[600];
    snprintf(file, sizeof file, "%s/cg-4242-1.stats", cgtest_tmpdir());
    cgi_stats_header *h = calloc(1, sizeof *h);
    unsigned char *area = calloc(1, 8192);
    CHECK(h && area);
    memcpy(h->magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC);
    h->version = CGI_STATS_VERSION;
    h->pid = 4242;
    atomic_store(&h->threads.ask, 5);
    atomic_store(&h->threads.done, 6); /* the answer to the request status makes next */
    atomic_store(&h->threads.gen, 2);
    memset(h->threads.stdlib, '\x1b', sizeof h->threads.stdlib);
    size_t off = 0;
    cgi_thread_rec rec = {.tid = 7, .gil = 0, .nframes = 2, .user = 1, .name_from = CGI_THREAD_NAME_THREADING};
    snprintf(rec.name, sizeof rec.name, "worker\x1b[2J");
    size_t start = off;
    off += sizeof rec;
    put_test_frame(area, &off, 10, "/u/job\x1b]0;x\x07.py", "run");
    put_test_frame(area, &off, -1, "/u/lib.py", "f");
    rec.size = (uint32_t)(off - start);
    memcpy(area + start, &rec, sizeof rec);
    cgi_thread_rec odd = {
        .tid = -5, .gil = 9, .nframes = 0, .user = 5, .name_from = CGI_THREAD_NAME_THREADING, .size = sizeof odd};
    memset(odd.name, 'n', sizeof odd.name);
    memcpy(area + off, &odd, sizeof odd), off += sizeof odd;
    cgi_thread_rec runs = {.tid = 9, .nframes = 300, .name_from = CGI_THREAD_NAME_OS, .size = sizeof runs + 8};
    snprintf(runs.name, sizeof runs.name, "runs-past");
    memcpy(area + off, &runs, sizeof runs), off += sizeof runs + 8;
    cgi_thread_rec huge = {.tid = 10, .size = 1u << 30, .name_from = CGI_THREAD_NAME_OS};
    snprintf(huge.name, sizeof huge.name, "too-big");
    memcpy(area + off, &huge, sizeof huge), off += sizeof huge;
    h->threads.nthreads = 4;
    h->threads.bytes = (uint32_t)off;
    for (int format = 0; format < 2; format++) {
        int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
        CHECK(fd >= 0 && ftruncate(fd, (off_t)(CGI_THREADS_OFF + CGI_THREADS_BYTES)) == 0);
        CHECK(pwrite(fd, h, sizeof *h, 0) == (ssize_t)sizeof *h);
        CHECK(pwrite(fd, area, off, (off_t)CGI_THREADS_OFF) == (ssize_t)off);
        close(fd);
        snprintf(out, sizeof out, "%s/hostile-threads.%s", cgtest_tmpdir(), format ? "txt" : "json");
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        const char *paths[] = {file};
        CHECK(o >= 0);
        CHECKF(cg_status_write_threads(paths, 1, "here", o, format ? CG_REPORT_TEXT : CG_REPORT_JSON, 16) == CG_OK,
               "%s", cg_last_error());
        close(o);
        char text[16384];
        FILE *f = fopen(out, "r");
        CHECK(f);
        size_t len = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        text[len] = '\0';
        CHECKF(!strchr(text, 0x1b) && !strchr(text, 0x07), "no terminal control in the %s:\n%s",
               format ? "text" : "JSON", text);
        const char *name = format ? "\"worker?[2J\" tid 7, GIL not held" : "\"worker\\u001b[2J\"";
        const char *job = format ? "/u/job?]0;x?.py:10 in run" : "\"/u/job\\u001b]0;x\\u0007.py\"";
        CHECKF(strstr(text, name) && strstr(text, job) && strstr(text, "/u/lib.py") && strstr(text, "nnnnnnnn") &&
                   strstr(text, "runs-past"),
               "the well-formed threads are shown:\n%s", text);
        CHECKF(!strstr(text, "too-big") && !strstr(text, "tid -5"), "nothing of a record past the area:\n%s", text);
    }
    free(h), free(area);
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
        /* A copy (private), the threads' runs folded in, as every reader of a file does. */
        cgi_stats_region *r = mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        close(fd);
        if (r == MAP_FAILED) continue;
        (*files)++;
        if (memcmp(r->h.magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC) == 0) cgi_stats_fold(r);
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
    /* The api column is one of every column's (CG_REPORT_TEXT_ALL). */
    CHECKF(cg_report_convert(in, out, CG_REPORT_TEXT_ALL) == CG_OK, "%s", cg_last_error());
    char *text = slurp(out);
    CHECK(text);
    char row[128];
    snprintf(row, sizeof row, "  %s myCall", api);
    CHECKF(strstr(text, row), "the whole name in its column: %s", text);
    return 0;
}

/* N1 without a lock: a thread cancelled in a blocking call (counted by the
 * layer with the site's threads inside) is no longer counted inside once it
 * has ended. */
static void *wait_long(void *arg)
{
    (void)arg;
    toyWait(dev(1), 20000);
    return NULL;
}

static int test_cancelled_thread_inside_blocking_call_is_no_longer_counted_inside(int argc, char **argv)
{
    (void)argc, (void)argv;
    alarm(60);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(toyWait(dev(1), 0) == TOY_SUCCESS); /* the site resolved: its counted call is the layer's */
    CHECK(cg_reset_stats() == CG_OK);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, wait_long, NULL) == 0);
    cg_site_stats s = {0};
    for (int i = 0; i < 5000 && (cg_get_stats("toyWait", &s), s.peak_inside) == 0; i++)
        cgtest_sleep_ms(1);
    CHECK(s.peak_inside == 1);
    cgtest_sleep_ms(20);
    CHECK(pthread_cancel(t) == 0);
    void *res = NULL;
    CHECK(pthread_join(t, &res) == 0 && res == PTHREAD_CANCELED);
    CHECK(cg_reset_stats() == CG_OK);
    CHECK(toyWait(dev(1), 0) == TOY_SUCCESS);
    CHECK(cg_get_stats("toyWait", &s) == CG_OK);
    CHECKF(s.peak_inside == 1, "peak_inside %u: the cancelled call is still counted inside", s.peak_inside);
    alarm(0);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"child_count_then_die", child_count_then_die},
    {"child_fork_while_locked", child_fork_while_locked},
    {"child_some_calls", child_some_calls},
    {"stats_exact_under_contention", test_stats_exact_under_contention},
    {"hostile_statistics_file_is_checked_field_by_field", test_hostile_statistics_file_is_checked_field_by_field},
    {"stats_survive_abort_and_exit", test_stats_survive_abort_and_exit},
    {"fork_resets_locks_and_counters", test_fork_resets_locks_and_counters},
    {"report_json_and_table", test_report_json_and_table},
    {"hostile_threads_answer_is_checked_record_by_record", test_hostile_threads_answer_is_checked_record_by_record},
    {"report_keeps_long_api_names", test_report_keeps_long_api_names},
    {"cancelled_thread_inside_blocking_call_is_no_longer_counted_inside",
     test_cancelled_thread_inside_blocking_call_is_no_longer_counted_inside},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
