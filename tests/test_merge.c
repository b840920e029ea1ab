/* The merge of a run's statistics files and the reading of saved reports, at
 * scale and under hostile storage: synthesized statistics files of the
 * current format (not real processes), read one at a time by pread; memory
 * bounded as docs/report.md states, checked by running the merge under an
 * address-space limit (RLIMIT_AS) of that bound, so a reader that keeps more
 * fails with "out of memory" or loses processes, whatever the speed. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/runtime/stats.h"
#include "../src/common/trace_file.h"

/* The bounds docs/report.md states: a saved report is read in at most
 * CG_REPORT_MEM_MULTIPLE times its size; a statistics directory in at most
 * CG_STATS_MEM_PER_PROCESS bytes a process; both plus a fixed allowance for
 * the buffers of one process (one statistics region) and stdio. */
#define CG_REPORT_MEM_MULTIPLE 8
#define CG_STATS_MEM_PER_PROCESS 1024
#define CG_MEM_FIXED ((size_t)16 << 20)

/* Sanitizers reserve shadow memory and keep freed blocks in quarantine: the
 * same tests run there without the limit (what is read is still checked). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CG_MEM_LIMITED 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CG_MEM_LIMITED 0
#endif
#endif
#ifndef CG_MEM_LIMITED
#define CG_MEM_LIMITED 1
#endif

/* ---- pread, watched: cuts a file short while the merge reads it ------------- */

static char cut_victim[256]; /* a file name; "" when disarmed */
static off_t cut_at_offset;  /* the read that cuts it: the records' */
static off_t cut_to;         /* its new size */
static int cut_fired;

static ssize_t cut_before_read(int fd, off_t off)
{
    if (!cut_victim[0] || off != cut_at_offset) return 0;
    char link[64], target[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = '\0';
    size_t vl = strlen(cut_victim), tl = (size_t)n;
    if (tl < vl || strcmp(target + tl - vl, cut_victim) != 0) return 0;
    if (truncate(target, cut_to) == 0) cut_fired++;
    return 0;
}

/* libcallguard's calls to pread come here (the executable's definition
 * wins), then go on to the real one. */
__attribute__((visibility("default"))) ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, void *, size_t, off_t);
    if (!real) real = (ssize_t(*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread");
    cut_before_read(fd, off);
    return real(fd, buf, n, off);
}

__attribute__((visibility("default"))) ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    static ssize_t (*real)(int, void *, size_t, off_t);
    if (!real) real = (ssize_t(*)(int, void *, size_t, off_t))dlsym(RTLD_NEXT, "pread64");
    cut_before_read(fd, off);
    return real(fd, buf, n, off);
}

/* ---- synthesized statistics files ------------------------------------------- */

#define SYNTH_BASE 0x7f1200000000ull /* the address the "process" mapped its region at */
#define SYNTH_PID0 100000

/* Process i of a run: pid SYNTH_PID0 + i, started i ns after the first;
 * one site "toySiteA" with i + 1 calls (and one with none, not listed).
 * Process 0 also died inside toySiteA on thread 77 (the last slot but some)
 * and kept a stall in the last stall entry: both lie past the records, in
 * the part of the file that is read separately. The file is sparse: the
 * header and the records are written, the rest is a hole. */
static int synth_stats_file(const char *dir, int i, cgi_stats_region *r)
{
    memset(&r->h, 0, sizeof r->h);
    memset(&r->r[0], 0, sizeof r->r[0]);
    memset(&r->r[1], 0, sizeof r->r[1]);
    memcpy(r->h.magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC);
    r->h.version = CGI_STATS_VERSION;
    r->h.max_records = CGI_STATS_MAX_RECORDS;
    atomic_store(&r->h.nrecords, 2);
    r->h.pid = SYNTH_PID0 + i;
    r->h.ppid = SYNTH_PID0;
    atomic_store(&r->h.state, CGI_PROC_EXITED);
    r->h.start_unix_ns = 1700000000000000000ull + (uint64_t)i;
    snprintf(r->h.command, sizeof r->h.command, "synth --rank %d", i);
    snprintf(r->h.host, sizeof r->h.host, "node%d", i % 3);
    r->h.rank = (uint32_t)i; /* every process a rank of its own: the view across ranks at its largest */
    r->h.rank_set = CGI_RANK_SET;
    r->h.base = SYNTH_BASE;
    atomic_store(&r->h.tick_mult, 1ull << 32);
    for (int k = 0; k < 2; k++) {
        snprintf(r->r[k].api, sizeof r->r[k].api, "toy");
        snprintf(r->r[k].name, sizeof r->r[k].name, k ? "toyUnused" : "toySiteA");
        r->r[k].used = 1;
    }
    atomic_store(&r->r[0].c.calls, (uint64_t)i + 1);
    atomic_store(&r->r[0].c.total_ns, 1000);
    char file[600];
    snprintf(file, sizeof file, "%s/cg-%d-%d.stats", dir, SYNTH_PID0 + i, i);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return -1;
    size_t used = offsetof(cgi_stats_region, r) + 2 * sizeof r->r[0];
    int ok = pwrite(fd, r, used, 0) == (ssize_t)used;
    if (i == 0) {
        cgi_slot slot = {0};
        atomic_store(&slot.tid, 77);
        atomic_store(&slot.counters, (cg_counters *)(uintptr_t)(SYNTH_BASE + offsetof(cgi_stats_region, r) +
                                                                offsetof(cgi_stats_record, c)));
        atomic_store(&slot.entered, 5000000);
        snprintf(slot.thread, sizeof slot.thread, "worker");
        off_t at = (off_t)(offsetof(cgi_stats_region, slot) + (CGI_STATS_MAX_SLOTS - 3) * sizeof slot);
        ok = ok && pwrite(fd, &slot, sizeof slot, at) == (ssize_t)sizeof slot;
        cgi_stall st = {0};
        atomic_store(&st.valid, 1);
        st.tid = 77, st.ns = st.call_ns = 60000000;
        snprintf(st.api, sizeof st.api, "toy");
        snprintf(st.name, sizeof st.name, "toySiteA");
        at = (off_t)(offsetof(cgi_stats_region, stall) + (CGI_STATS_MAX_STALLS - 1) * sizeof st);
        ok = ok && pwrite(fd, &st, sizeof st, at) == (ssize_t)sizeof st;
    }
    ok = ok && ftruncate(fd, (off_t)sizeof *r) == 0;
    close(fd);
    return ok ? 0 : -1;
}

/* Process i's timeline: thread 77 made 3 calls of toySiteA (record 0), in
 * the file's one chunk. */
/* A trace file of process SYNTH_PID0 + i: one thread (tid 77) whose chunk
 * holds n events entering at t0[k] ns (the header has no TSC clock, so
 * ticks are ns), each 500 ns in the driver. */
static int synth_trace_file_at(const char *dir, int i, const uint64_t *t0, int n);

static int synth_trace_file(const char *dir, int i)
{
    const uint64_t t0[3] = {1000000u, 2000000u, 3000000u};
    return synth_trace_file_at(dir, i, t0, 3);
}

static int synth_trace_file_at(const char *dir, int i, const uint64_t *t0, int nev)
{
    const size_t headsz = CGI_TRACE_DATA_OFFSET;
    char *head = calloc(1, headsz);
    if (!head) return -1;
    cgi_trace_header *h = (cgi_trace_header *)head;
    memcpy(h->magic, CGI_TRACE_MAGIC, sizeof CGI_TRACE_MAGIC);
    h->version = CGI_TRACE_VERSION;
    h->chunk_bytes = CGI_TRACE_CHUNK_BYTES;
    atomic_store(&h->nchunks, 1);
    h->max_threads = CGI_TRACE_MAX_THREADS;
    atomic_store(&h->nthreads, 1);
    h->pid = SYNTH_PID0 + i;
    h->stats_start_unix_ns = 1700000000000000000ull + (uint64_t)i;
    cgi_trace_thread *t = (cgi_trace_thread *)(h + 1);
    atomic_store(&t->written, (uint64_t)nev);
    t->tid = 77;
    atomic_store(&t->ready, 1);
    cgi_trace_event ev[64];
    if (nev > 64) return free(head), -1;
    memset(ev, 0, sizeof ev);
    cgi_trace_chunk chunk;
    memset(&chunk, 0, sizeof chunk);
    atomic_store(&chunk.magic, CGI_TRACE_CHUNK_MAGIC);
    atomic_store(&chunk.used, (uint64_t)nev * sizeof ev[0]);
    for (int k = 0; k < nev; k++) {
        atomic_store(&ev[k].t0, t0[k]);
        atomic_store(&ev[k].call_ns, 500);
        atomic_store(&ev[k].rec, 0);
    }
    char file[600];
    snprintf(file, sizeof file, "%s/cg-%d-%d.trace", dir, SYNTH_PID0 + i, i);
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int ok = fd >= 0 && pwrite(fd, head, headsz, 0) == (ssize_t)headsz &&
             pwrite(fd, &chunk, sizeof chunk, (off_t)CGI_TRACE_CHUNK_OFFSET(0)) == (ssize_t)sizeof chunk &&
             pwrite(fd, ev, (size_t)nev * sizeof ev[0], (off_t)(CGI_TRACE_CHUNK_OFFSET(0) + sizeof chunk)) ==
                 (ssize_t)((size_t)nev * sizeof ev[0]);
    if (fd >= 0) close(fd);
    free(head);
    return ok ? 0 : -1;
}

static int synth_stats_dir(const char *dir, int n)
{
    mkdir(dir, 0700);
    cgi_stats_region *r = calloc(1, sizeof *r);
    if (!r) return -1;
    int rc = 0;
    for (int i = 0; i < n && rc == 0; i++)
        rc = synth_stats_file(dir, i, r);
    free(r);
    return rc;
}

/* Removes a directory of files (what a test synthesized: tens of MB). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(dirfd(d), e->d_name, 0);
    if (d) closedir(d);
    rmdir(dir);
}

/* ---- reading what was written ----------------------------------------------- */

static char *slurp(const char *path, size_t *len) { return cgtest_read_file(path, len); }

/* The report's "totals": processes and calls; -1 when not found. */
static int json_totals(const char *json, unsigned long *procs, unsigned long *calls)
{
    const char *t = strstr(json, "\n  \"totals\": {\"processes\": ");
    return t && sscanf(t, "\n  \"totals\": {\"processes\": %lu, \"calls\": %lu", procs, calls) == 2 ? 0 : -1;
}

/* The address space in use now (what RLIMIT_AS limits), in bytes. */
static size_t vm_size_now(void)
{
    char s[8192];
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, s, sizeof s - 1) : -1;
    if (fd >= 0) close(fd);
    s[n > 0 ? n : 0] = '\0';
    const char *v = strstr(s, "VmSize:");
    return v ? strtoul(v + 7, NULL, 10) * 1024 : 0;
}

/* Child: caps its address space at what it uses now plus allow bytes, then
 * runs one merge. args: allow, "stats" DIR | "report" FILE..., OUT, json|text. */
static int child_merge_under_limit(int argc, char **argv)
{
    if (argc < 5) return 2;
    size_t allow = strtoull(argv[0], NULL, 10);
    const char *out = argv[argc - 2];
    cg_report_format fmt = strcmp(argv[argc - 1], "text") == 0 ? CG_REPORT_TEXT : CG_REPORT_JSON;
    size_t now = vm_size_now();
    CHECK(now > 0);
    struct rlimit rl = {.rlim_cur = now + allow, .rlim_max = RLIM_INFINITY};
    CHECK(!CG_MEM_LIMITED || setrlimit(RLIMIT_AS, &rl) == 0);
    int rc = strcmp(argv[1], "stats") == 0
                 ? cg_report_merge(argv[2], NULL, 0, out, fmt)
                 : cg_report_merge_files((const char *const *)argv + 2, (size_t)argc - 4, out, fmt);
    CHECKF(rc == CG_OK, "%s", cg_last_error());
    return 0;
}

/* Not a test: writes N synthesized statistics files into DIR, for measuring
 * the merge by hand (docs/report.md: `cgtest_merge child_synthesize_statistics_files
 * DIR N`, then `cgtest_merge child_merge_under_limit BYTES stats DIR OUT json`). */
static int child_synthesize(int argc, char **argv)
{
    if (argc < 2) return 2;
    CHECK(synth_stats_dir(argv[0], atoi(argv[1])) == 0);
    return 0;
}

/* ---- tests ------------------------------------------------------------------- */

/* More files than fit mapped at once under the limit: every process is in
 * the report (totals and the combined table), and the thread slot and the
 * stall at the far end of process 0's file are read. Mapping every file, as
 * the merge did, needs a region's size of address space a file and loses the rest. */
static int test_merge_reports_every_statistics_file_in_bounded_memory(int argc, char **argv)
{
    (void)argc, (void)argv;
    const int n = 3000;
    char dir[512], out[600], allow[32];
    snprintf(dir, sizeof dir, "%s/many", cgtest_tmpdir());
    CHECK(synth_stats_dir(dir, n) == 0);
    snprintf(allow, sizeof allow, "%zu", CG_MEM_FIXED + (size_t)n * CG_STATS_MEM_PER_PROCESS);
    for (int format = 0; format < 2; format++) {
        snprintf(out, sizeof out, "%s/many.%s", cgtest_tmpdir(), format ? "txt" : "json");
        cgtest_result res;
        const char *args[] = {allow, "stats", dir, out, format ? "text" : "json", NULL};
        CHECK(cgtest_child(&res, NULL, "child_merge_under_limit", args) == 0);
        CHECKF(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "status %d: %s", res.status, res.err);
        char *s = slurp(out, NULL);
        CHECK(s);
        unsigned long procs = 0, calls = 0, want_calls = (unsigned long)n * (n + 1) / 2;
        char line[160];
        if (format) {
            snprintf(line, sizeof line, "callguard: %d processes, %lu calls", n, want_calls);
            CHECKF(strstr(s, line), "no '%s' in the table", line);
            snprintf(line, sizeof line, "callguard: all %d processes on 3 hosts:", n);
            CHECKF(strstr(s, line), "no '%s' in the table", line);
            CHECK(strstr(s, "thread 77 \"worker\" inside toy toySiteA, called 5.000 ms after start"));
            CHECK(!strstr(s, "toyUnused"));
        } else {
            CHECKF(json_totals(s, &procs, &calls) == 0 && procs == (unsigned long)n && calls == want_calls,
                   "totals: %lu processes, %lu calls; expected %d, %lu", procs, calls, n, want_calls);
            CHECK(strstr(
                s, "\"in_flight\": [\n       {\"api\": \"toy\", \"name\": \"toySiteA\", \"tid\": 77, "
                   "\"thread\": \"worker\", \"state\": \"inside\", \"entered_ns\": 5000000, \"args\": null,\n        "
                   "\"python\": null}"));
            CHECK(strstr(s, "\"ns\": 60000000"));
            CHECK(!strstr(s, "processes_without_statistics"));
        }
        free(s);
        unlink(out);
    }
    remove_dir(dir);
    return 0;
}

/* Sends stderr to `path` (created or emptied); returns the saved stderr for
 * stderr_back, or -1. */
static int stderr_to(const char *path)
{
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int ok = saved >= 0 && fd >= 0 && dup2(fd, 2) == 2;
    if (fd >= 0) close(fd);
    if (!ok && saved >= 0) close(saved);
    return ok ? saved : -1;
}

static void stderr_back(int saved)
{
    fflush(stderr);
    dup2(saved, 2), close(saved);
}

/* One file cut short while the merge reads it (between its listing and its
 * reading), one cut before: each is named on stderr with what is wrong, no
 * signal, and the report holds every other process and counts the two. */
static int test_statistics_file_cut_short_is_named_and_the_others_reported(int argc, char **argv)
{
    (void)argc, (void)argv;
    const int n = 6;
    char dir[512], out[600], errpath[600], victim[600];
    snprintf(dir, sizeof dir, "%s/cut", cgtest_tmpdir());
    CHECK(synth_stats_dir(dir, n) == 0);
    snprintf(victim, sizeof victim, "%s/cg-%d-%d.stats", dir, SYNTH_PID0 + 4, 4);
    CHECK(truncate(victim, 4096 + 512) == 0);
    snprintf(cut_victim, sizeof cut_victim, "/cg-%d-%d.stats", SYNTH_PID0 + 2, 2);
    cut_at_offset = (off_t)offsetof(cgi_stats_region, r);
    cut_to = 4096 + 100;
    snprintf(out, sizeof out, "%s/cut.json", cgtest_tmpdir());
    snprintf(errpath, sizeof errpath, "%s/cut.err", cgtest_tmpdir());
    int saved = stderr_to(errpath);
    CHECK(saved >= 0);
    int rc = cg_report_merge(dir, NULL, 0, out, CG_REPORT_JSON);
    stderr_back(saved);
    cut_victim[0] = '\0';
    CHECKF(rc == CG_OK, "%s", cg_last_error());
    CHECKF(cut_fired == 1, "the file was cut %d times: pread was not watched", cut_fired);
    char *err = slurp(errpath, NULL), *s = slurp(out, NULL);
    CHECK(err && s);
    fprintf(stderr, "%s", err);
    char want[1400];
    snprintf(want, sizeof want,
             "callguard: %s/cg-%d-2.stats: cut short while read: 4196 bytes, a statistics file has "
             "%zu; process %d is left out of the report\n",
             dir, SYNTH_PID0 + 2, sizeof(cgi_stats_region), SYNTH_PID0 + 2);
    CHECKF(strstr(err, want), "no '%s' on stderr", want);
    snprintf(want, sizeof want,
             "callguard: %s: cut short: 4608 bytes, a statistics file has %zu; process %d is left "
             "out of the report\n",
             victim, sizeof(cgi_stats_region), SYNTH_PID0 + 4);
    CHECKF(strstr(err, want), "no '%s' on stderr", want);
    unsigned long procs = 0, calls = 0;
    CHECK(json_totals(s, &procs, &calls) == 0);
    CHECKF(procs == 4 && calls == 1 + 2 + 4 + 6, "%lu processes, %lu calls", procs, calls);
    CHECK(strstr(s, "\"processes_without_statistics\": 2"));
    CHECK(!strstr(s, "\"pid\": 100002,") && !strstr(s, "\"pid\": 100004,") && strstr(s, "\"pid\": 100005,"));
    free(err), free(s);
    remove_dir(dir);
    return 0;
}

/* The timeline of a run (cg_trace_merge) reads each trace file by pread,
 * one ring at a time: a file cut short while it is read loses that
 * process's events, said on stderr, and the other processes' timelines
 * are written (a mapping of it would have raised SIGBUS). */
static int test_trace_file_cut_short_while_merged_is_named_not_a_crash(int argc, char **argv)
{
    (void)argc, (void)argv;
    char dir[512], out[600], errpath[600];
    snprintf(dir, sizeof dir, "%s/trace-cut", cgtest_tmpdir());
    CHECK(synth_stats_dir(dir, 2) == 0);
    CHECK(synth_trace_file(dir, 0) == 0 && synth_trace_file(dir, 1) == 0);
    snprintf(cut_victim, sizeof cut_victim, "/cg-%d-%d.trace", SYNTH_PID0 + 1, 1);
    cut_at_offset = (off_t)(CGI_TRACE_CHUNK_OFFSET(0) + sizeof(cgi_trace_chunk)); /* its events' read */
    cut_to = cut_at_offset;
    cut_fired = 0;
    snprintf(out, sizeof out, "%s/trace-cut.json", cgtest_tmpdir());
    snprintf(errpath, sizeof errpath, "%s/trace-cut.err", cgtest_tmpdir());
    int saved = stderr_to(errpath);
    CHECK(saved >= 0);
    cg_trace_totals tot;
    int rc = cg_trace_merge(dir, out, &tot);
    stderr_back(saved);
    cut_victim[0] = '\0';
    CHECKF(rc == CG_OK, "%s", cg_last_error());
    CHECKF(cut_fired == 1, "the file was cut %d times: pread was not watched", cut_fired);
    char *err = slurp(errpath, NULL), *s = slurp(out, NULL);
    CHECK(err && s);
    fprintf(stderr, "%s", err);
    char want[300];
    snprintf(want, sizeof want,
             "callguard: the trace file of process %d was cut short while read: thread 77's later events "
             "are left out of the timeline\n",
             SYNTH_PID0 + 1);
    CHECKF(strstr(err, want), "no '%s' on stderr", want);
    snprintf(want, sizeof want, "\"name\":\"toySiteA\",\"cat\":\"call\",\"pid\":%d,\"tid\":77,\"ts\":3000.000",
             SYNTH_PID0);
    CHECKF(strstr(s, want), "no '%s' in the timeline", want);
    snprintf(want, sizeof want, "\"pid\":%d,\"tid\":77,\"ts\"", SYNTH_PID0 + 1);
    CHECK(!strstr(s, want));
    free(err), free(s);
    remove_dir(dir);
    return 0;
}

/* Every event's ts is its time in microseconds with three decimals, exact,
 * whichever digits change from one event to the next (the writer copies
 * the leading digits of the one before while they stay the same). */
static int test_trace_timestamps_are_exact_across_digit_boundaries(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const uint64_t t0[] = {5000u,           999999999u,          1000000000u,          1000000001u,
                                  999999999999u,   1000000000000u,      1000000999999u,       1000001000000u,
                                  1999999999999u,  2000000000000u,      21146780116257u,      21146780116258u,
                                  21146781000000u, 999999999999999999u, 1000000000000000000u, 18446744073709551000u};
    const int n = (int)(sizeof t0 / sizeof *t0);
    char dir[512], out[600];
    snprintf(dir, sizeof dir, "%s/trace-ts", cgtest_tmpdir());
    CHECK(synth_stats_dir(dir, 1) == 0);
    CHECK(synth_trace_file_at(dir, 0, t0, n) == 0);
    snprintf(out, sizeof out, "%s/trace-ts.json", cgtest_tmpdir());
    cg_trace_totals tot;
    CHECKF(cg_trace_merge(dir, out, &tot) == CG_OK, "%s", cg_last_error());
    CHECKF(tot.events == (uint64_t)n, "%lu events", (unsigned long)tot.events);
    char *s = slurp(out, NULL);
    CHECK(s);
    const char *at = s;
    for (int k = 0; k < n; k++) {
        char want[96];
        snprintf(want, sizeof want, "\"tid\":77,\"ts\":%llu.%03llu,\"dur\":0.500,", (unsigned long long)(t0[k] / 1000),
                 (unsigned long long)(t0[k] % 1000));
        const char *p = strstr(at, want);
        CHECKF(p, "event %d: no '%s' after the one before in %s", k, want, s);
        at = p + 1;
    }
    free(s);
    remove_dir(dir);
    return 0;
}

/* A saved report of 100,000 small processes (the 5 MB file that took
 * 5 GB), and one of distinct entry points only (the combined table's worst
 * case), each read within CG_REPORT_MEM_MULTIPLE times its size; every
 * process a rank of its own, so the view across ranks keeps a value for
 * every site of every process. */
static int test_report_reading_stays_within_its_stated_memory(int argc, char **argv)
{
    (void)argc, (void)argv;
    char small[600], sites[600], out[600], allow[32];
    snprintf(small, sizeof small, "%s/small-processes.json", cgtest_tmpdir());
    snprintf(sites, sizeof sites, "%s/distinct-sites.json", cgtest_tmpdir());
    FILE *f = fopen(small, "w");
    CHECK(f);
    const int nsmall = 100000, nsiteproc = 20, nsites = CGI_STATS_MAX_RECORDS;
    fprintf(f, "{\"schema\":\"callguard-report\",\"version\":1,\"processes\":[");
    for (int i = 0; i < nsmall; i++)
        fprintf(f, "%s{\"pid\":%d,\"rank\":%d,\"sites\":[{\"name\":\"clFinish\",\"calls\":1}]}", i ? "," : "", i + 1,
                i);
    fprintf(f, "]}\n");
    CHECK(fclose(f) == 0);
    CHECK((f = fopen(sites, "w")));
    fprintf(f, "{\"schema\":\"callguard-report\",\"version\":1,\"processes\":[");
    for (int i = 0; i < nsiteproc; i++) {
        fprintf(f, "%s{\"pid\":%d,\"rank\":%d,\"sites\":[", i ? "," : "", i + 1, i);
        for (int k = 0; k < nsites; k++)
            fprintf(f, "%s{\"name\":\"%x\",\"calls\":1}", k ? "," : "", i * nsites + k);
        fprintf(f, "]}");
    }
    fprintf(f, "]}\n");
    CHECK(fclose(f) == 0);
    const char *inputs[] = {small, sites};
    const unsigned long nprocs[] = {(unsigned long)nsmall, (unsigned long)nsiteproc};
    const unsigned long ncalls[] = {(unsigned long)nsmall, (unsigned long)nsiteproc * nsites};
    for (int in = 0; in < 2; in++) {
        struct stat st;
        CHECK(stat(inputs[in], &st) == 0);
        snprintf(allow, sizeof allow, "%zu", CG_MEM_FIXED + (size_t)st.st_size * CG_REPORT_MEM_MULTIPLE);
        for (int format = 0; format < 2; format++) {
            /* The table of 100,000 processes is tens of MB: it goes to
             * /dev/null (written in place); the JSON's totals are checked. */
            snprintf(out, sizeof out, "%s", format ? "/dev/null" : "");
            if (!format) snprintf(out, sizeof out, "%s/read.json", cgtest_tmpdir());
            cgtest_result res;
            const char *args[] = {allow, "report", inputs[in], out, format ? "text" : "json", NULL};
            CHECK(cgtest_child(&res, NULL, "child_merge_under_limit", args) == 0);
            CHECKF(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0, "%s (%lld bytes), %s: status %d: %s",
                   inputs[in], (long long)st.st_size, format ? "text" : "json", res.status, res.err);
            if (format) continue;
            char *s = slurp(out, NULL);
            CHECK(s);
            unsigned long procs = 0, calls = 0;
            CHECKF(json_totals(s, &procs, &calls) == 0 && procs == nprocs[in] && calls == ncalls[in],
                   "%s: %lu processes, %lu calls", inputs[in], procs, calls);
            free(s);
            unlink(out);
        }
    }
    unlink(small), unlink(sites);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"merge_reports_every_statistics_file_in_bounded_memory",
     test_merge_reports_every_statistics_file_in_bounded_memory},
    {"statistics_file_cut_short_is_named_and_the_others_reported",
     test_statistics_file_cut_short_is_named_and_the_others_reported},
    {"report_reading_stays_within_its_stated_memory", test_report_reading_stays_within_its_stated_memory},
    {"trace_file_cut_short_while_merged_is_named_not_a_crash",
     test_trace_file_cut_short_while_merged_is_named_not_a_crash},
    {"trace_timestamps_are_exact_across_digit_boundaries", test_trace_timestamps_are_exact_across_digit_boundaries},
    {"child_merge_under_limit", child_merge_under_limit},
    {"child_synthesize_statistics_files", child_synthesize},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
