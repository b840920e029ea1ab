/* A job's timeline: per-process traces merged on one clock (trace_job.h).
 *
 * An event's ts in a process's file is its host's CLOCK_MONOTONIC, which
 * counts from that host's boot (a time namespace may shift it): two hosts'
 * are unrelated, and a merge by them alone puts hosts seconds or days
 * apart. Each file also holds a (CLOCK_REALTIME, CLOCK_MONOTONIC) pair its
 * process read back to back, and which monotonic clock it is (the boot and
 * the time namespace). Files of one clock keep their order exactly: all are
 * moved by one offset, realtime - monotonic of the pair read closest among
 * them. Each other clock is moved by its own. The result is CLOCK_REALTIME,
 * off by at most half of each pair's gap, plus however far apart the hosts'
 * realtime clocks were (NTP, PTP): no file can tell that, and the metadata
 * says so rather than guess.
 *
 * Two passes over each file: the first checks all of it and reads its
 * process and clock, so a bad file stops the merge before anything is
 * written; the second copies its events with pid, tid and ts rewritten. */
#define _GNU_SOURCE
#include "trace_job.h"

#include "outfile.h"
#include "trace_jscan.h"

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Raw (escaped) strings copied from a file, at most this long. */
#define JOB_STR_MAX 512
/* Above the largest pid Linux gives (pid_max is at most 2^22): a process
 * whose pid another host's process has too is moved up by it. */
#define JOB_PID_STEP 4194304u
/* Members of one event (callguard writes at most 7). */
#define JOB_EVENT_MEMBERS 24

typedef struct job_proc {
    char *file;
    dev_t dev; /* the file's, as listed: one file named twice is read once */
    ino_t ino;
    int known;  /* dev and ino were read */
    size_t seq; /* its place in the listing */
    char host[JOB_STR_MAX], boot[JOB_STR_MAX], command[JOB_STR_MAX];
    uint64_t pid, rank, start_unix_ns, dropped;
    int has_rank, has_process, has_pair, merged, has_list, has_events;
    uint64_t real_ns, mono_ns, gap_ns, time_ns;
    uint64_t calib_ns; /* over how long its TSC was calibrated; has_calib 0: no TSC said */
    int has_calib;
    uint64_t min_ts, events; /* the first event (monotonic ns) and the complete events */
    size_t clock;            /* its clock's index */
    uint64_t mpid;           /* its pid in the merged trace */
    int first;               /* the first file of its merged pid: names the process */
} job_proc;

/* One CLOCK_MONOTONIC: a boot and time namespace. */
typedef struct job_clock {
    size_t ref;               /* the file whose pair has the smallest gap */
    int64_t offset;           /* realtime - monotonic of that pair */
    int64_t min_off, max_off; /* over its files' pairs */
    size_t nproc;
} job_clock;

typedef struct job {
    job_proc *p;
    size_t n, cap;
    job_clock *c;
    size_t nc;
    uint64_t base; /* realtime ns of ts 0 */
    FILE *out;
    char *err;
    size_t errcap;
} job;

static int job_fail(job *jb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int job_fail(job *jb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(jb->err, jb->errcap, fmt, ap);
    va_end(ap);
    return 1;
}

/* ---- reading a file --------------------------------------------------------- */

/* The file's bytes (malloc'd, *len), checked as the statistics files are:
 * a regular file of the caller's, no symbolic link, writable by no one
 * else. NULL with err set; an empty file is NULL with *len 0 and no error. */
static char *job_slurp(job *jb, const char *file, size_t *len)
{
    *len = 0;
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0) {
        if (errno == ELOOP)
            job_fail(jb, "%s: a symbolic link: refused (a trace is read from the file its process wrote)", file);
        else
            job_fail(jb, "%s: cannot open: %s", file, strerror(errno));
        return NULL;
    }
    const char *bad = fstat(fd, &st) != 0                  ? strerror(errno)
                      : !S_ISREG(st.st_mode)               ? "not a regular file"
                      : st.st_uid != geteuid()             ? "owned by another user"
                      : (st.st_mode & (S_IWGRP | S_IWOTH)) ? "writable by other users"
                                                           : NULL;
    if (bad) {
        if (st.st_uid != geteuid() && S_ISREG(st.st_mode))
            job_fail(jb, "%s: owned by uid %u, not by you (uid %u): refused", file, (unsigned)st.st_uid,
                     (unsigned)geteuid());
        else
            job_fail(jb, "%s: %s: refused", file, bad);
        close(fd);
        return NULL;
    }
    char *b = st.st_size > 0 ? malloc((size_t)st.st_size) : NULL;
    size_t got = 0;
    while (b && got < (size_t)st.st_size) {
        ssize_t k = read(fd, b + got, (size_t)st.st_size - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    if (st.st_size > 0 && (!b || got != (size_t)st.st_size)) {
        job_fail(jb, "%s: %s", file, b ? "cut short while read" : "out of memory");
        free(b);
        return NULL;
    }
    *len = got;
    return b;
}

/* A whole number for key, or the scan fails. */
static void job_u64(cgi_jscan *j, const char *key, uint64_t *out)
{
    cgi_jspan v;
    if (!cgi_jscan_value(j, &v)) return;
    if (cgi_jspan_u64(v, out) != 0) {
        char what[64];
        snprintf(what, sizeof what, "a whole number from 0 for \"%s\"", key);
        j->s = v.s;
        cgi_jscan_fail(j, what);
    }
}

/* A string for key, copied raw into out[JOB_STR_MAX]. */
static void job_str(cgi_jscan *j, const char *key, char *out)
{
    cgi_jspan v;
    if (!cgi_jscan_str(j, &v)) return;
    size_t n = (size_t)(v.e - v.s);
    if (n >= JOB_STR_MAX) {
        char what[64];
        snprintf(what, sizeof what, "at most %d bytes for \"%s\"", JOB_STR_MAX - 1, key);
        j->s = v.s;
        return cgi_jscan_fail(j, what);
    }
    memcpy(out, v.s, n);
    out[n] = '\0';
}

static void job_process_member(cgi_jscan *j, cgi_jspan key, void *ctx)
{
    job_proc *p = ctx;
    if (cgi_jspan_is(key, "pid"))
        job_u64(j, "pid", &p->pid);
    else if (cgi_jspan_is(key, "host"))
        job_str(j, "host", p->host);
    else if (cgi_jspan_is(key, "command"))
        job_str(j, "command", p->command);
    else if (cgi_jspan_is(key, "start_unix_ns"))
        job_u64(j, "start_unix_ns", &p->start_unix_ns);
    else if (cgi_jspan_is(key, "rank") && cgi_jscan_peek(j) != 'n')
        job_u64(j, "rank", &p->rank), p->has_rank = !j->err;
    else
        cgi_jscan_value(j, NULL); /* a rank of null: none */
}

static void job_pair_member(cgi_jscan *j, cgi_jspan key, void *ctx)
{
    job_proc *p = ctx;
    if (cgi_jspan_is(key, "realtime_ns"))
        job_u64(j, "realtime_ns", &p->real_ns);
    else if (cgi_jspan_is(key, "monotonic_ns"))
        job_u64(j, "monotonic_ns", &p->mono_ns);
    else if (cgi_jspan_is(key, "gap_ns"))
        job_u64(j, "gap_ns", &p->gap_ns);
    else if (cgi_jspan_is(key, "time_namespace"))
        job_u64(j, "time_namespace", &p->time_ns);
    else if (cgi_jspan_is(key, "boot_id"))
        job_str(j, "boot_id", p->boot);
    else if (cgi_jspan_is(key, "tsc_calibrated_over_ns"))
        job_u64(j, "tsc_calibrated_over_ns", &p->calib_ns), p->has_calib = 1;
    else
        cgi_jscan_value(j, NULL);
}

static void job_other_member(cgi_jscan *j, cgi_jspan key, void *ctx)
{
    job_proc *p = ctx;
    if (cgi_jspan_is(key, "process")) {
        cgi_jscan_object(j, job_process_member, p);
        p->has_process = 1;
    } else if (cgi_jspan_is(key, "clock_pair")) {
        cgi_jscan_object(j, job_pair_member, p);
        p->has_pair = 1;
    } else if (cgi_jspan_is(key, "dropped")) {
        job_u64(j, "dropped", &p->dropped);
    } else {
        if (cgi_jspan_is(key, "job")) p->merged = 1;
        cgi_jscan_value(j, NULL);
    }
}

/* One event's members, as spans. */
typedef struct job_event {
    cgi_jspan key[JOB_EVENT_MEMBERS], val[JOB_EVENT_MEMBERS];
    size_t n;
    uint64_t ts; /* monotonic ns; 0 for metadata */
} job_event;

static void job_event_member(cgi_jscan *j, cgi_jspan key, void *ctx)
{
    job_event *e = ctx;
    if (e->n == JOB_EVENT_MEMBERS) return cgi_jscan_fail(j, "at most 24 members in an event");
    e->key[e->n] = key;
    if (cgi_jscan_value(j, &e->val[e->n])) e->n++;
}

static const cgi_jspan *job_event_get(const job_event *e, const char *key)
{
    for (size_t i = 0; i < e->n; i++)
        if (cgi_jspan_is(e->key[i], key)) return &e->val[i];
    return NULL;
}

/* An event read and checked: ph, pid and tid, and ts for all but metadata.
 * Returns 1 for metadata, 0 for an event at e->ts, -1 failed. */
static int job_event_read(cgi_jscan *j, job_event *e)
{
    e->n = 0, e->ts = 0;
    const char *at = j->s;
    cgi_jscan_object(j, job_event_member, e);
    if (j->err) return -1;
    const cgi_jspan *ph = job_event_get(e, "ph"), *pid = job_event_get(e, "pid"), *tid = job_event_get(e, "tid");
    const cgi_jspan *t = job_event_get(e, "ts");
    uint64_t v;
    const char *what = !ph || *ph->s != '"'                     ? "an event with \"ph\""
                       : !pid || cgi_jspan_u64(*pid, &v) != 0   ? "an event with a whole \"pid\""
                       : !tid || cgi_jspan_u64(*tid, &v) != 0   ? "an event with a whole \"tid\""
                       : cgi_jspan_is(*ph, "\"M\"")             ? NULL
                       : !t || cgi_jspan_us_ns(*t, &e->ts) != 0 ? "an event with \"ts\" in microseconds"
                                                                : NULL;
    if (what) return j->s = at, cgi_jscan_fail(j, what), -1;
    return cgi_jspan_is(*ph, "\"M\"");
}

/* A file being read: its process, and the event being read (here, not on
 * the callback's stack, whose address the scanner would be handed). */
typedef struct job_scan {
    job_proc *p;
    job_event e;
} job_scan;

static void job_scan_event(cgi_jscan *j, void *ctx)
{
    job_scan *sc = ctx;
    job_proc *p = sc->p;
    if (job_event_read(j, &sc->e) != 0) return;
    if (!p->has_events || sc->e.ts < p->min_ts) p->min_ts = sc->e.ts;
    p->has_events = 1;
    p->events++;
}

static void job_top_member(cgi_jscan *j, cgi_jspan key, void *ctx)
{
    job_scan *sc = ctx;
    if (cgi_jspan_is(key, "traceEvents"))
        cgi_jscan_array(j, job_scan_event, sc), sc->p->has_list = 1;
    else if (cgi_jspan_is(key, "otherData"))
        cgi_jscan_object(j, job_other_member, sc->p);
    else
        cgi_jscan_value(j, NULL);
}

/* The first pass over a file: all of it checked, its process and clock read. */
static int job_read(job *jb, job_proc *p)
{
    size_t len;
    jb->err[0] = '\0';
    char *b = job_slurp(jb, p->file, &len);
    if (!b) return jb->err[0] ? 1 : 2; /* 2: empty, a process still writing it */
    cgi_jscan j = {.start = b, .s = b, .end = b + len};
    job_scan *sc = malloc(sizeof *sc);
    if (!sc) return free(b), job_fail(jb, "out of memory");
    sc->p = p;
    cgi_jscan_object(&j, job_top_member, sc);
    free(sc);
    if (!j.err && cgi_jscan_peek(&j)) cgi_jscan_fail(&j, "nothing after the trace");
    free(b);
    if (j.err) return job_fail(jb, "%s: not a trace (trace-event JSON): %s", p->file, j.msg);
    if (!p->has_list) return job_fail(jb, "%s: not a trace: no \"traceEvents\"", p->file);
    if (p->merged)
        return job_fail(jb, "%s: a job's merged trace (callguard trace's output), not one process's", p->file);
    if (!p->has_process || !p->has_pair || !p->real_ns)
        return job_fail(jb,
                        "%s: a trace without its process's host and clock pair (`callguard run --trace DIR/` "
                        "writes one per process)",
                        p->file);
    return 0;
}

/* ---- clocks and processes --------------------------------------------------- */

static int job_same_clock(const job_proc *a, const job_proc *b)
{
    return a->boot[0] && a->time_ns && a->time_ns == b->time_ns && !strcmp(a->boot, b->boot);
}

/* Each file's clock, each clock's offset from its closest pair, and ts 0:
 * the first event, on realtime, to the microsecond. */
static int job_clocks(job *jb)
{
    jb->c = calloc(jb->n ? jb->n : 1, sizeof *jb->c);
    if (!jb->c) return job_fail(jb, "out of memory");
    int have_base = 0;
    for (size_t i = 0; i < jb->n; i++) {
        job_proc *p = &jb->p[i];
        size_t k = 0;
        while (k < jb->nc && !job_same_clock(&jb->p[jb->c[k].ref], p))
            k++;
        int64_t off = (int64_t)p->real_ns - (int64_t)p->mono_ns;
        job_clock *c = &jb->c[k];
        if (k == jb->nc) {
            jb->nc++;
            *c = (job_clock){.ref = i, .offset = off, .min_off = off, .max_off = off};
        } else if (p->gap_ns < jb->p[c->ref].gap_ns) {
            c->ref = i, c->offset = off;
        }
        c->min_off = off < c->min_off ? off : c->min_off;
        c->max_off = off > c->max_off ? off : c->max_off;
        c->nproc++;
        p->clock = k;
    }
    for (size_t i = 0; i < jb->n; i++) {
        const job_proc *p = &jb->p[i];
        if (!p->has_events) continue;
        uint64_t at = (uint64_t)((int64_t)p->min_ts + jb->c[p->clock].offset);
        if (!have_base || at < jb->base) jb->base = at, have_base = 1;
    }
    jb->base -= jb->base % 1000;
    return 0;
}

/* The order of the process groups: by host, then rank (none last), pid and start. */
static int job_by_place(const void *x, const void *y)
{
    const job_proc *a = x, *b = y;
    int h = strcmp(a->host, b->host);
    if (h) return h;
    if (a->has_rank != b->has_rank) return b->has_rank - a->has_rank;
    if (a->has_rank && a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    return a->start_unix_ns < b->start_unix_ns ? -1 : a->start_unix_ns > b->start_unix_ns;
}

/* Each file's pid in the merged trace: its own, unless a process of
 * another host or clock has it (two "hosts" in network and pid namespaces
 * of one kernel share a clock); then moved up by JOB_PID_STEP. The images
 * of one pid on one host and clock (an exec) share it: one process. */
static void job_pids(job *jb)
{
    for (size_t i = 0; i < jb->n; i++) {
        job_proc *p = &jb->p[i];
        p->mpid = p->pid, p->first = 1;
        for (size_t k = 0; k < i; k++) {
            const job_proc *q = &jb->p[k];
            if (q->mpid != p->mpid) continue;
            if (q->pid == p->pid && q->clock == p->clock && !strcmp(q->host, p->host)) {
                p->first = 0;
                break;
            }
            p->mpid += JOB_PID_STEP;
            k = (size_t)-1; /* again from the first: the new pid may be taken too */
        }
    }
}

/* The most two processes' times can be off by from the pairs alone: half
 * of each of the two widest reference gaps (one clock: 0, exact). */
static uint64_t job_uncertainty(const job *jb)
{
    uint64_t a = 0, b = 0;
    for (size_t k = 0; k < jb->nc; k++) {
        uint64_t u = (jb->p[jb->c[k].ref].gap_ns + 1) / 2;
        if (u > a)
            b = a, a = u;
        else if (u > b)
            b = u;
    }
    return jb->nc > 1 ? a + b : 0;
}

/* ---- writing ---------------------------------------------------------------- */

static void job_us(FILE *out, uint64_t ns) { fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000)); }

/* A process group's name, "HOST rank R pid P", its command, and its place. */
static void job_process_meta(job *jb, const job_proc *p, size_t order)
{
    FILE *o = jb->out;
    fprintf(o,
            "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"args\":{\"name\":\"%s",
            p->mpid, p->mpid, p->host[0] ? p->host : "unknown host");
    if (p->has_rank) fprintf(o, " rank %" PRIu64, p->rank);
    fprintf(o, " pid %" PRIu64 "\"}},\n", p->pid);
    fprintf(o,
            "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64
            ",\"args\":{\"labels\":\"%s",
            p->mpid, p->mpid, p->command);
    if (p->dropped) fprintf(o, "; callguard dropped %" PRIu64 " events", p->dropped);
    fprintf(o,
            "\"}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"args\":"
            "{\"sort_index\":%zu}}",
            p->mpid, p->mpid, order);
}

typedef struct job_emit {
    job *jb;
    const job_proc *p;
    size_t *nevents;
    job_event e; /* the event being copied (as job_scan's) */
} job_emit;

/* One event again: pid, tid and ts rewritten, the rest as it was; the
 * file's own process name and labels give way to the job's. */
static void job_emit_event(cgi_jscan *j, void *ctx)
{
    job_emit *em = ctx;
    const job_event *e = &em->e;
    int meta = job_event_read(j, &em->e);
    if (meta < 0) return;
    const cgi_jspan *name = job_event_get(e, "name");
    if (meta && name && (cgi_jspan_is(*name, "\"process_name\"") || cgi_jspan_is(*name, "\"process_labels\""))) return;
    const job_proc *p = em->p;
    uint64_t shift = p->mpid - p->pid, v;
    FILE *o = em->jb->out;
    fputs((*em->nevents)++ ? ",\n{" : "\n{", o);
    for (size_t i = 0; i < e->n; i++) {
        fprintf(o, "%s\"%.*s\":", i ? "," : "", (int)(e->key[i].e - e->key[i].s), e->key[i].s);
        if (cgi_jspan_is(e->key[i], "pid") || cgi_jspan_is(e->key[i], "tid")) {
            cgi_jspan_u64(e->val[i], &v);
            fprintf(o, "%" PRIu64, v + shift);
        } else if (!meta && cgi_jspan_is(e->key[i], "ts")) {
            job_us(o, (uint64_t)((int64_t)e->ts + em->jb->c[p->clock].offset) - em->jb->base);
        } else {
            fwrite(e->val[i].s, 1, (size_t)(e->val[i].e - e->val[i].s), o);
        }
    }
    fputc('}', o);
}

static void job_emit_top(cgi_jscan *j, cgi_jspan key, void *ctx)
{
    if (cgi_jspan_is(key, "traceEvents"))
        cgi_jscan_array(j, job_emit_event, ctx);
    else
        cgi_jscan_value(j, NULL);
}

/* The second pass over a file: its events into the merged trace. */
static int job_emit_file(job *jb, const job_proc *p, size_t order, size_t *nevents)
{
    size_t len;
    char *b = job_slurp(jb, p->file, &len);
    if (!b) return job_fail(jb, "%s: changed while merged (it was %s): run again", p->file, len ? "read" : "empty");
    if (p->first) {
        fputs((*nevents)++ ? ",\n" : "\n", jb->out);
        job_process_meta(jb, p, order);
    }
    job_emit *em = malloc(sizeof *em);
    if (!em) return free(b), job_fail(jb, "out of memory");
    *em = (job_emit){.jb = jb, .p = p, .nevents = nevents};
    cgi_jscan j = {.start = b, .s = b, .end = b + len};
    cgi_jscan_object(&j, job_emit_top, em);
    free(b), free(em);
    return j.err ? job_fail(jb, "%s: changed while merged: %s", p->file, j.msg) : 0;
}

/* A string of ours (a file name) as JSON. */
static void job_json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

/* What each clock and process was aligned by: before otherData, whose
 * producer must stay in the file's last bytes (outfile.h). */
static void job_write_clocks(job *jb)
{
    FILE *o = jb->out;
    fprintf(o, "\"callguard_job\":{\"ts_zero_unix_ns\":%" PRIu64 ",\n\"clocks\":[", jb->base);
    for (size_t k = 0; k < jb->nc; k++) {
        const job_clock *c = &jb->c[k];
        const job_proc *r = &jb->p[c->ref];
        fprintf(o,
                "%s\n{\"clock\":%zu,\"host\":\"%s\",\"boot_id\":\"%s\",\"time_namespace\":%" PRIu64
                ",\"processes\":%zu,"
                "\"pair_gap_ns\":%" PRIu64 ",\"uncertainty_ns\":%" PRIu64 ",\"offset_spread_ns\":%lu}",
                k ? "," : "", k, r->host, r->boot, r->time_ns, c->nproc, r->gap_ns, (r->gap_ns + 1) / 2,
                (unsigned long)(c->max_off - c->min_off));
    }
    fputs("],\n\"processes\":[", o);
    for (size_t i = 0; i < jb->n; i++) {
        const job_proc *p = &jb->p[i];
        fprintf(o, "%s\n{\"file\":", i ? "," : "");
        job_json_str(o, p->file);
        fprintf(o, ",\"host\":\"%s\",\"rank\":", p->host);
        if (p->has_rank)
            fprintf(o, "%" PRIu64, p->rank);
        else
            fputs("null", o);
        if (p->has_calib) fprintf(o, ",\"tsc_calibrated_over_ns\":%" PRIu64, p->calib_ns);
        fprintf(o,
                ",\"pid\":%" PRIu64 ",\"merged_pid\":%" PRIu64 ",\"clock\":%zu,\"pair_gap_ns\":%" PRIu64
                ",\"uncertainty_ns\":%" PRIu64 ","
                "\"events\":%" PRIu64 "}",
                p->pid, p->mpid, p->clock, p->gap_ns, (jb->p[jb->c[p->clock].ref].gap_ns + 1) / 2, p->events);
    }
    fputs("]},\n", o);
}

static void job_write_tail(job *jb, const cgi_job_totals *t)
{
    FILE *o = jb->out;
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n", o);
    job_write_clocks(jb);
    fprintf(o,
            CGI_OUT_TIMELINE_PRODUCER CALLGUARD_VERSION
            "\",\"job\":{\"clock\":\"CLOCK_REALTIME, in "
            "microseconds after ts_zero_unix_ns\",\"ts_zero_unix_ns\":%" PRIu64 ",\"files\":%zu,\"processes\":%zu,"
            "\"hosts\":%zu,\"clocks\":%zu,\"events\":%" PRIu64 ",\"max_uncertainty_ns\":%" PRIu64
            ",\n\"uncertainty\":\"processes "
            "of one clock (one boot and time namespace) are placed by that clock itself, no pair needed; processes of "
            "different clocks within max_uncertainty_ns, from each clock's (realtime, monotonic) pair\",\n"
            "\"realtime_sync\":\"%s\"}}}\n",
            jb->base, t->files, t->processes, t->hosts, t->clocks, t->events, t->uncertainty_ns,
            t->clocks > 1 ? "not measured: processes of different clocks are also off by however far apart their "
                            "hosts' CLOCK_REALTIME were (NTP or PTP sync), which these files cannot tell"
                          : "not needed: one clock");
}

/* ---- the merge ---------------------------------------------------------------- */

static int job_is_json(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".json") == 0;
}

static int job_add(job *jb, char *file)
{
    if (!file) return job_fail(jb, "out of memory");
    struct stat st;
    int known = lstat(file, &st) == 0;
    if (jb->n == jb->cap) {
        size_t cap = jb->cap ? 2 * jb->cap : 16;
        job_proc *more = realloc(jb->p, cap * sizeof *more);
        if (!more) return free(file), job_fail(jb, "out of memory");
        jb->p = more, jb->cap = cap;
    }
    jb->p[jb->n] = (job_proc){.file = file, .known = known, .seq = jb->n};
    if (known) jb->p[jb->n].dev = st.st_dev, jb->p[jb->n].ino = st.st_ino;
    jb->n++;
    return 0;
}

/* The inputs' files: a folder's *.json in version order, a file as given. */
static int job_list(job *jb, const char *const *inputs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(inputs[i], &st) != 0) return job_fail(jb, "%s: %s", inputs[i], strerror(errno));
        if (!S_ISDIR(st.st_mode)) {
            if (job_add(jb, strdup(inputs[i]))) return 1;
            continue;
        }
        struct dirent **names;
        int k = scandir(inputs[i], &names, job_is_json, versionsort);
        if (k < 0) return job_fail(jb, "%s: cannot read the folder: %s", inputs[i], strerror(errno));
        if (k == 0)
            job_fail(jb, "%s: no traces in it (*.json: `callguard run --trace %s/` writes one per process)", inputs[i],
                     inputs[i]);
        size_t len = strlen(inputs[i]);
        const char *sep = len && inputs[i][len - 1] == '/' ? "" : "/";
        int rc = k == 0;
        for (int f = 0; f < k; f++) {
            char *path = NULL;
            if (!rc && asprintf(&path, "%s%s%s", inputs[i], sep, names[f]->d_name) < 0) path = NULL;
            if (!rc) rc = job_add(jb, path);
            free(names[f]);
        }
        free(names);
        if (rc) return 1;
    }
    return 0;
}

static int job_by_file(const void *x, const void *y)
{
    const job_proc *a = x, *b = y;
    if (a->known != b->known) return a->known < b->known ? -1 : 1;
    if (a->known && a->dev != b->dev) return a->dev < b->dev ? -1 : 1;
    if (a->known && a->ino != b->ino) return a->ino < b->ino ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int job_by_seq(const void *x, const void *y)
{
    const job_proc *a = x, *b = y;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Each file once, in the order listed: a folder and a file of it, a folder
 * named twice (DIR and DIR/) or a hard link would merge its events twice.
 * A symbolic link is a file of its own, which the read refuses. */
static void job_unique(job *jb)
{
    qsort(jb->p, jb->n, sizeof *jb->p, job_by_file);
    size_t kept = 0;
    for (size_t i = 0; i < jb->n; i++) {
        const job_proc *prev = kept ? &jb->p[kept - 1] : NULL;
        if (prev && prev->known && jb->p[i].known && prev->dev == jb->p[i].dev && prev->ino == jb->p[i].ino)
            free(jb->p[i].file);
        else
            jb->p[kept++] = jb->p[i];
    }
    jb->n = kept;
    qsort(jb->p, jb->n, sizeof *jb->p, job_by_seq);
}

/* Reads every file (the first pass), leaving out empty ones. */
static int job_read_all(job *jb)
{
    size_t kept = 0;
    for (size_t i = 0; i < jb->n; i++) {
        int rc = job_read(jb, &jb->p[i]);
        if (rc == 1) {
            while (i < jb->n)
                jb->p[kept++] = jb->p[i++];
            jb->n = kept;
            return 1;
        }
        if (rc == 2) {
            fprintf(stderr, "callguard: %s is empty (its process is still writing it, or failed): left out\n",
                    jb->p[i].file);
            free(jb->p[i].file);
            continue;
        }
        jb->p[kept++] = jb->p[i];
    }
    jb->n = kept;
    jb->err[0] = '\0';
    return kept ? 0 : job_fail(jb, "no traces to merge: every file was empty");
}

static int job_write(job *jb, const char *out, cgi_job_totals *t)
{
    cgi_outfile of;
    int e = cgi_outfile_open(out, &of);
    if (e) return job_fail(jb, "cannot write %s: %s", out, strerror(e));
    jb->out = of.f;
    fputs(CGI_OUT_TIMELINE_HEAD, jb->out);
    size_t nevents = 0;
    int rc = 0;
    for (size_t i = 0; i < jb->n && !rc; i++)
        rc = job_emit_file(jb, &jb->p[i], i, &nevents);
    if (!rc) job_write_tail(jb, t);
    if (rc && of.own) {
        /* Never a half-written trace renamed into place. */
        fclose(of.f);
        if (of.tmp) unlink(of.tmp);
        free(of.tmp);
        return 1;
    }
    char note[1024] = "";
    e = cgi_outfile_close(&of, out, "timeline", note, sizeof note);
    if (e == EEXIST) return job_fail(jb, "%s", note);
    return e ? job_fail(jb, "cannot write %s: %s", out, strerror(e)) : 0;
}

int cgi_trace_job(const char *const *inputs, size_t n, const char *out, cgi_job_totals *t, char *err, size_t cap)
{
    job jb = {.err = err, .errcap = cap};
    err[0] = '\0';
    *t = (cgi_job_totals){0};
    int rc = job_list(&jb, inputs, n);
    if (!rc) job_unique(&jb);
    if (!rc) rc = job_read_all(&jb);
    if (!rc) {
        qsort(jb.p, jb.n, sizeof *jb.p, job_by_place);
        rc = job_clocks(&jb);
    }
    if (!rc) {
        job_pids(&jb);
        t->files = jb.n, t->clocks = jb.nc, t->uncertainty_ns = job_uncertainty(&jb);
        for (size_t i = 0; i < jb.n; i++) {
            t->events += jb.p[i].events;
            t->processes += jb.p[i].first;
            t->hosts += i == 0 || strcmp(jb.p[i].host, jb.p[i - 1].host) != 0;
        }
        rc = job_write(&jb, out, t);
    }
    for (size_t i = 0; i < jb.n; i++)
        free(jb.p[i].file);
    free(jb.p), free(jb.c);
    return rc;
}
