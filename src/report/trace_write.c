/* Writing the timeline as Chrome trace-event JSON (the format Perfetto and
 * chrome://tracing open; docs/report.md shows it): this process's rings at
 * exit(), or every trace file of a `callguard run` directory merged into
 * one trace. Names come from each process's statistics records. */
#define _GNU_SOURCE
#include "trace_write.h"

#include "../common/errors.h"
#include "../common/file_names.h"
#include "outfile.h"
#include "report.h"
#include "trace_args.h"
#include "trace_clock.h"
#include "trace_digits.h"
#include "trace_dir.h"
#include "trace_flight.h"
#include "trace_read.h"
#include "../common/utf8.h"

#include <callguard/layer.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The JSON is built in one buffer and written a large block at a time:
 * a trace holds every event its threads kept, and each event's text is
 * its site's and its thread's fixed parts, escaped once (cgi_tj_names),
 * four numbers and its arguments. Keys without a value to tell are left
 * out: `error`, `runtime_held` and `stall` appear only when true
 * (docs/report.md). */
#define CGI_TJ_BUF (1u << 18)
/* The longest event pair (a lock wait and its call): fixed text, five
 * numbers, the site's names escaped to at most 6 bytes a byte, and the
 * arguments. */
#define CGI_TJ_EVENT_MAX                                                                                               \
    (1024 + 6 * (2 * CGI_NAME_MAX + CGI_API_NAME_MAX + CGI_DOMAIN_NAME_MAX) +                                          \
     (CGI_TRACE_WORDS_MAX + 2) * CGI_TJ_ARG_MAX)

cgi_args_named_fn *cgi_report_args;

typedef struct cgi_tj {
    FILE *out;
    cgi_outfile file; /* out is file.f: a new file renamed into place (outfile.h) */
    char *b;          /* CGI_TJ_BUF bytes, written out before an event could overflow it */
    size_t n;
    int failed;     /* 0; else an errno: what failed. The rest is not attempted; nothing is renamed into place */
    size_t nevents; /* written so far: the separator */
    uint64_t kept, dropped;
    size_t processes, threads;
    size_t flights;          /* calls in flight at their process's end (trace_flight.h) */
    int tsc;                 /* the events' ticks were TSC counts */
    struct cgi_tj_names *nm; /* the sites' text of the process being written */
    /* The process of a file of one (`--trace DIR/`); NULL: none said. */
    const cgi_trace_header *one;
    const cgi_stats_region *one_r;
    const cgi_trace_clock *one_clk;
} cgi_tj;

static void cgi_tj_flush(cgi_tj *j)
{
    if (j->n && !j->failed && fwrite_unlocked(j->b, 1, j->n, j->out) != j->n) j->failed = errno ? errno : EIO;
    j->n = 0;
}

/* Room for one more event (or metadata line). */
static inline void cgi_tj_room(cgi_tj *j)
{
    if (j->n > CGI_TJ_BUF - CGI_TJ_EVENT_MAX) cgi_tj_flush(j);
}

static inline void cgi_tj_mem(cgi_tj *j, const char *s, size_t k)
{
    memcpy(j->b + j->n, s, k);
    j->n += k;
}
#define cgi_tj_lit(j, s) cgi_tj_mem((j), (s), sizeof(s) - 1)

static inline void cgi_tj_u(cgi_tj *j, uint64_t v)
{
    char t[24];
    int i = 24;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100);
        v /= 100;
        i -= 2;
        memcpy(t + i, cgi_tj_digits + 2 * d, 2);
    }
    if (v >= 10) {
        i -= 2;
        memcpy(t + i, cgi_tj_digits + 2 * v, 2);
    } else {
        t[--i] = (char)('0' + v);
    }
    cgi_tj_mem(j, t + i, (size_t)(24 - i));
}

static void cgi_tj_str(cgi_tj *j, const char *s, size_t max)
{
    j->b[j->n++] = '"';
    j->n += cgi_json_escape(j->b + j->n, s, max);
    j->b[j->n++] = '"';
}

static void cgi_tj_sep(cgi_tj *j)
{
    cgi_tj_room(j);
    if (j->nevents++)
        cgi_tj_lit(j, ",\n");
    else
        cgi_tj_lit(j, "\n");
}

/* A site's text, escaped once per process at its first event:
 *   call:  {"ph":"X","name":"NAME","cat":"call       ...  ,"args":{"api":"API"
 *   wait:  {"ph":"X","name":"lock wait DOMAIN","cat":"lock_wait   ...  ,"args":{"entry_point":"NAME" */
typedef struct cgi_tj_site {
    const cg_args *args;              /* how its events' argument words read (cgi_report_args); NULL: not known */
    const char *(*result_name)(long); /* its layer's names of result codes; NULL: none */
    uint16_t call, call_args, wait, wait_args; /* lengths of the four parts, in text */
    char text[];
} cgi_tj_site;

static cgi_tj_site *cgi_tj_site_make(const cgi_stats_record *sr)
{
    const char *api = sr ? sr->api : "?", *name = sr ? sr->name : "?";
    const char *dom = sr && sr->domain[0] ? sr->domain : "?";
    cgi_tj_site *s = malloc(sizeof *s + 256 + 6 * (2 * CGI_NAME_MAX + CGI_API_NAME_MAX + CGI_DOMAIN_NAME_MAX));
    if (!s) return NULL;
    s->args = NULL, s->result_name = NULL;
    if (sr && cgi_report_args) s->args = cgi_report_args(api, name, &s->result_name);
    char *p = s->text;
    size_t n;
#define CGI_TJ_PUT(str) (memcpy(p, str, sizeof(str) - 1), p += sizeof(str) - 1)
    n = (size_t)(p - s->text);
    CGI_TJ_PUT("{\"ph\":\"X\",\"name\":\"");
    p += cgi_json_escape(p, name, CGI_NAME_MAX);
    CGI_TJ_PUT("\",\"cat\":\"call");
    s->call = (uint16_t)((size_t)(p - s->text) - n);
    n = (size_t)(p - s->text);
    CGI_TJ_PUT(",\"args\":{\"api\":\"");
    p += cgi_json_escape(p, api, CGI_API_NAME_MAX);
    CGI_TJ_PUT("\"");
    s->call_args = (uint16_t)((size_t)(p - s->text) - n);
    n = (size_t)(p - s->text);
    CGI_TJ_PUT("{\"ph\":\"X\",\"name\":\"lock wait ");
    p += cgi_json_escape(p, dom, CGI_DOMAIN_NAME_MAX);
    CGI_TJ_PUT("\",\"cat\":\"lock_wait");
    s->wait = (uint16_t)((size_t)(p - s->text) - n);
    n = (size_t)(p - s->text);
    CGI_TJ_PUT(",\"args\":{\"entry_point\":\"");
    p += cgi_json_escape(p, name, CGI_NAME_MAX);
    CGI_TJ_PUT("\"");
    s->wait_args = (uint16_t)((size_t)(p - s->text) - n);
#undef CGI_TJ_PUT
    return s;
}

/* A process's sites' text, by statistics record; the last slot is for
 * events of no record. */
typedef struct cgi_tj_names {
    cgi_tj_site *site[CGI_STATS_MAX_RECORDS + 1];
} cgi_tj_names;

static void cgi_tj_names_clear(cgi_tj_names *nm)
{
    for (size_t i = 0; i <= CGI_STATS_MAX_RECORDS; i++)
        free(nm->site[i]), nm->site[i] = NULL;
}

/* A process's metadata events: its name (the command), and how many events
 * its rings dropped, when they did. */
static void cgi_tj_process_meta(cgi_tj *j, int pid, const cgi_stats_region *r, uint64_t dropped,
                                const cgi_trace_header *h)
{
    cgi_tj_sep(j);
    cgi_tj_lit(j, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
    cgi_tj_u(j, (uint64_t)pid);
    cgi_tj_lit(j, ",\"tid\":");
    cgi_tj_u(j, (uint64_t)pid);
    cgi_tj_lit(j, ",\"args\":{\"name\":");
    cgi_tj_str(j, r && r->h.command[0] ? r->h.command : "?", 200);
    cgi_tj_lit(j, "}}");
    if (!dropped) return;
    cgi_tj_sep(j);
    cgi_tj_lit(j, "{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":");
    cgi_tj_u(j, (uint64_t)pid);
    cgi_tj_lit(j, ",\"tid\":");
    cgi_tj_u(j, (uint64_t)pid);
    cgi_tj_lit(j, ",\"args\":{\"labels\":\"callguard left out ");
    cgi_tj_u(j, dropped);
    if (h && h->max_chunks && h->keep == CGI_TRACE_KEEP_FIRST)
        cgi_tj_lit(j, " events (--trace-max: the first kept)\"}}");
    else if (h && h->max_chunks)
        cgi_tj_lit(j, " events (--trace-max: the latest kept)\"}}");
    else
        cgi_tj_lit(j, " events\"}}");
}

/* A thread's metadata event: its name (at most 16 bytes). */
static void cgi_tj_thread_meta(cgi_tj *j, int pid, int tid, const char *name)
{
    cgi_tj_sep(j);
    cgi_tj_lit(j, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":");
    cgi_tj_u(j, (uint64_t)pid);
    cgi_tj_lit(j, ",\"tid\":");
    cgi_tj_u(j, (uint64_t)tid);
    cgi_tj_lit(j, ",\"args\":{\"name\":");
    cgi_tj_str(j, name[0] ? name : "?", 16);
    cgi_tj_lit(j, "}}");
}

/* The thread's part of every event: ","pid":P,"tid":T,"ts": (and room to copy it 16 bytes at a time) */
typedef struct cgi_tj_who {
    char text[128];
    size_t n;
} cgi_tj_who;

static void cgi_tj_who_make(cgi_tj_who *who, int pid, int tid)
{
    char *o = who->text;
    o = cgi_o_lit(o, "\",\"pid\":");
    o = cgi_o_u(o, (uint64_t)pid);
    o = cgi_o_lit(o, ",\"tid\":");
    o = cgi_o_u(o, (uint64_t)tid);
    o = cgi_o_lit(o, ",\"ts\":");
    who->n = (size_t)(o - who->text);
}

/* One event, as read from its chunk. */
typedef struct cgi_tj_event {
    uint64_t t0, call, wait; /* t0 in nanoseconds of the timeline's clock */
    uint32_t rec, fl;
    const uint64_t *words; /* CGI_EV_WORDS(fl) of them */
} cgi_tj_event;

/* The text of the site of record rec, made at its first event; NULL when
 * out of memory. */
static inline cgi_tj_site *cgi_tj_site_of(cgi_tj_names *nm, const cgi_stats_region *r, uint32_t nrec, uint32_t rec)
{
    uint32_t at = rec < nrec && rec < CGI_STATS_MAX_RECORDS ? rec : CGI_STATS_MAX_RECORDS;
    cgi_tj_site *s = nm->site[at];
    if (__builtin_expect(!s, 0)) s = nm->site[at] = cgi_tj_site_make(at < CGI_STATS_MAX_RECORDS ? &r->r[at] : NULL);
    return s;
}

/* An event's lock wait, which ended when the call entered the driver. */
static inline char *cgi_o_wait(char *o, const cgi_tj_site *s, const cgi_tj_who *who, const cgi_tj_event *e,
                               cgi_ts_cache *tsc)
{
    const char *wait_text = s->text + s->call + s->call_args, *wait_args = wait_text + s->wait;
    o = cgi_o_text(o, wait_text, s->wait);
    if (e->fl & CGI_EV_WAIT_STALL) o = cgi_o_lit(o, ",stall");
    o = cgi_o_text(o, who->text, who->n);
    o = cgi_o_ts(o, e->t0 > e->wait ? e->t0 - e->wait : 0, tsc);
    o = cgi_o_lit(o, ",\"dur\":");
    o = cgi_o_us(o, e->wait);
    o = cgi_o_text(o, wait_args, s->wait_args);
    if (e->fl & CGI_EV_HELD) o = cgi_o_lit(o, ",\"runtime_held\":true");
    if (e->fl & CGI_EV_WAIT_STALL) o = cgi_o_lit(o, ",\"stall\":true");
    return cgi_o_lit(o, "}}");
}

/* An event's call. */
static inline char *cgi_o_call(char *o, const cgi_tj_site *s, const cgi_tj_who *who, const cgi_tj_event *e,
                               cgi_ts_cache *tsc)
{
    const char *call_text = s->text, *call_args = call_text + s->call;
    o = cgi_o_text(o, call_text, s->call);
    if (e->fl & CGI_EV_CALL_STALL) o = cgi_o_lit(o, ",stall");
    o = cgi_o_text(o, who->text, who->n);
    o = cgi_o_ts(o, e->t0, tsc);
    o = cgi_o_lit(o, ",\"dur\":");
    o = cgi_o_us(o, e->call);
    o = cgi_o_text(o, call_args, s->call_args);
    if (s->args && (e->fl & CGI_EV_ARGS)) o = cgi_o_args(o, s->args, s->result_name, e->fl, e->words);
    if (e->fl & CGI_EV_ERROR) o = cgi_o_lit(o, ",\"error\":true");
    if (e->fl & CGI_EV_HELD) o = cgi_o_lit(o, ",\"runtime_held\":true");
    if (e->fl & CGI_EV_CALL_STALL) o = cgi_o_lit(o, ",\"stall\":true");
    if (e->wait) {
        o = cgi_o_lit(o, ",\"lock_wait_us\":");
        o = cgi_o_us(o, e->wait);
    }
    return cgi_o_lit(o, "}}");
}

/* A chunk of the file: whose, and from which of its thread's events. */
typedef struct cgi_tj_chunk {
    uint64_t seq, used;
    uint32_t thread, k;
} cgi_tj_chunk;

static int cgi_tj_by_thread(const void *a, const void *b)
{
    const cgi_tj_chunk *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The file's chunks in use, by thread and then in order (*count of them);
 * NULL with *count 0 when there are none, or out of memory (*oom). */
static cgi_tj_chunk *cgi_tj_chunks(const cgi_trace_view *v, size_t *count, int *oom)
{
    uint64_t claimed = atomic_load_explicit(&v->h->nchunks, memory_order_acquire);
    uint32_t nthreads = atomic_load_explicit(&v->h->nthreads, memory_order_acquire);
    *count = 0, *oom = 0;
    if (!claimed || v->fd < 0) return NULL;
    cgi_tj_chunk *c = malloc(claimed * sizeof *c);
    if (!c) return *oom = 1, NULL;
    size_t n = 0;
    for (uint64_t k = 0; k < claimed; k++) {
        cgi_trace_chunk head;
        if (cgi_pread_full(v->fd, &head, sizeof head, (off_t)CGI_TRACE_CHUNK_OFFSET(k)) != sizeof head) break;
        uint64_t used = atomic_load_explicit(&head.used, memory_order_relaxed);
        if (atomic_load_explicit(&head.magic, memory_order_relaxed) != CGI_TRACE_CHUNK_MAGIC ||
            head.thread >= nthreads || head.thread >= CGI_TRACE_MAX_THREADS || used == 0)
            continue;
        if (used > CGI_TRACE_CHUNK_BYTES - sizeof head) used = CGI_TRACE_CHUNK_BYTES - sizeof head;
        c[n++] = (cgi_tj_chunk){atomic_load_explicit(&head.seq, memory_order_relaxed), used, head.thread, (uint32_t)k};
    }
    qsort(c, n, sizeof *c, cgi_tj_by_thread);
    *count = n;
    return c;
}

/* One chunk's events (read into buf), oldest first: their lock waits and calls. */
static void cgi_tj_chunk_events(cgi_tj *j, const char *buf, size_t used, const cgi_tj_who *who,
                                const cgi_stats_region *r, uint32_t nrec, const cgi_trace_clock *clk, cgi_ts_cache *tsc)
{
    for (size_t at = 0; at + sizeof(cgi_trace_event) <= used;) {
        const cgi_trace_event *re = (const cgi_trace_event *)(buf + at);
        cgi_tj_event e;
        e.t0 = cgi_trace_ns(clk, atomic_load_explicit(&re->t0, memory_order_relaxed));
        e.call = atomic_load_explicit(&re->call_ns, memory_order_relaxed);
        e.wait = atomic_load_explicit(&re->wait_ns, memory_order_relaxed);
        e.rec = atomic_load_explicit(&re->rec, memory_order_relaxed);
        e.fl = atomic_load_explicit(&re->flags, memory_order_relaxed);
        e.words = (const uint64_t *)(re + 1);
        size_t size = sizeof *re + 8u * CGI_EV_WORDS(e.fl);
        if (CGI_EV_WORDS(e.fl) > CGI_TRACE_WORDS_MAX || at + size > used) break; /* cut short: the rest is not there */
        at += size;
        cgi_tj_site *s = cgi_tj_site_of(j->nm, r, nrec, e.rec);
        if (!s) {
            j->failed = ENOMEM;
            return;
        }
        j->kept++;
        cgi_tj_room(j);
        char *o = j->b + j->n;
        if (e.wait) {
            o = j->nevents++ ? cgi_o_lit(o, ",\n") : cgi_o_lit(o, "\n");
            o = cgi_o_wait(o, s, who, &e, tsc);
        }
        o = j->nevents++ ? cgi_o_lit(o, ",\n") : cgi_o_lit(o, "\n");
        o = cgi_o_call(o, s, who, &e, tsc);
        j->n = (size_t)(o - j->b);
    }
}

/* A call in flight at the process's end (cgi_trace_flights): its event,
 * after its thread's name when its thread has no ring (its first call
 * never returned). */
typedef struct cgi_tj_flight_arg {
    cgi_tj *j;
    const cgi_trace_view *v;
    int pid;
} cgi_tj_flight_arg;

static void cgi_tj_flight(int32_t tid, const char *thread, const char *text, size_t len, void *ctx)
{
    cgi_tj_flight_arg *a = ctx;
    cgi_tj *j = a->j;
    uint32_t n = atomic_load(&a->v->h->nthreads), i = 0;
    while (i < n && i < CGI_TRACE_MAX_THREADS && !(atomic_load(&a->v->threads[i].ready) && a->v->threads[i].tid == tid))
        i++;
    if (i == n || i == CGI_TRACE_MAX_THREADS) cgi_tj_thread_meta(j, a->pid, tid, thread), j->threads++;
    if (j->n + len + 2 > CGI_TJ_BUF) cgi_tj_flush(j);
    cgi_tj_sep(j);
    cgi_tj_mem(j, text, len);
    j->flights++;
}

/* A process's timeline: its header and thread table in v, its chunks read
 * from v->fd by pread into buf (CGI_TRACE_CHUNK_BYTES; never mapped: a
 * file cut short meanwhile is a short read, not SIGBUS). own: the
 * process's own, at exit(). */
static void cgi_tj_process_chunks(cgi_tj *j, const cgi_trace_view *v, const cgi_stats_region *r,
                                  const cgi_trace_clock *clk, int own, char *buf)
{
    int pid = v->h->pid;
    uint64_t kept, dropped;
    cgi_trace_count(v, &kept, &dropped);
    /* The calls in flight at the process's end (own: its own, at exit()). */
    uint64_t end = r ? cgi_trace_flight_end(r, clk, own) : 0;
    size_t flights = r ? cgi_trace_flights(r, clk, end, pid, NULL, NULL) : 0;
    if (kept == 0 && dropped == 0 && flights == 0) return;
    j->dropped += dropped, j->processes++;
    cgi_tj_process_meta(j, pid, r, dropped, v->h);
    uint32_t nrec = r ? atomic_load(&r->h.nrecords) : 0;
    size_t nchunks;
    int oom;
    cgi_tj_chunk *c = cgi_tj_chunks(v, &nchunks, &oom);
    if (oom) {
        j->failed = ENOMEM;
        return;
    }
    for (size_t i = 0; i < nchunks && !j->failed;) {
        uint32_t ti = c[i].thread;
        const cgi_trace_thread *t = &v->threads[ti];
        j->threads++;
        char tname[17];
        cgi_trace_thread_name(t, tname);
        cgi_tj_thread_meta(j, pid, t->tid, tname);
        cgi_tj_who who;
        cgi_tj_who_make(&who, pid, t->tid);
        cgi_ts_cache tsc = {0};
        for (; i < nchunks && c[i].thread == ti && !j->failed; i++) {
            off_t at = (off_t)CGI_TRACE_CHUNK_OFFSET(c[i].k) + (off_t)sizeof(cgi_trace_chunk);
            size_t got = cgi_pread_full(v->fd, buf, (size_t)c[i].used, at);
            if (got < c[i].used)
                cgi_say("the trace file of process %d was cut short while read: thread %d's later events "
                        "are left out of the timeline",
                        pid, t->tid);
            cgi_tj_chunk_events(j, buf, got, &who, r, nrec, clk, &tsc);
        }
    }
    free(c);
    cgi_tj_flight_arg fa = {j, v, pid};
    if (flights) cgi_trace_flights(r, clk, end, pid, cgi_tj_flight, &fa);
}

static void cgi_tj_process(cgi_tj *j, const cgi_trace_view *v, const cgi_stats_region *r, const cgi_trace_clock *clk,
                           int own, char *buf)
{
    cgi_tj_process_chunks(j, v, r, clk, own, buf);
    cgi_tj_names_clear(j->nm); /* the next process's records are its own */
}

static FILE *cgi_tj_open(const char *path, cgi_tj *j)
{
    *j = (cgi_tj){0};
    j->b = malloc(CGI_TJ_BUF);
    j->nm = calloc(1, sizeof *j->nm);
    int e = j->b && j->nm ? cgi_outfile_open(path, &j->file) : ENOMEM;
    if (e) {
        free(j->b), free(j->nm);
        return errno = e, NULL;
    }
    j->out = j->file.f;
    cgi_tj_lit(j, CGI_OUT_TIMELINE_HEAD);
    return j->out;
}

/* A file of one process (`--trace DIR/`) says which process, host and
 * clock it is: `callguard trace` aligns a job's files by it (trace_job.c). */
static void cgi_tj_process_other(cgi_tj *j)
{
    const cgi_trace_header *h = j->one;
    const cgi_stats_region *r = j->one_r;
    cgi_tj_lit(j, ",\n\"process\":{\"pid\":");
    cgi_tj_u(j, (uint64_t)h->pid);
    cgi_tj_lit(j, ",\"host\":");
    cgi_tj_str(j, h->host[0] ? h->host : r && r->h.host[0] ? r->h.host : "", sizeof h->host);
    cgi_tj_lit(j, ",\"rank\":");
    if (r && (r->h.rank_set & CGI_RANK_SET))
        cgi_tj_u(j, r->h.rank);
    else
        cgi_tj_lit(j, "null");
    cgi_tj_lit(j, ",\"command\":");
    cgi_tj_str(j, r ? r->h.command : "", 200);
    cgi_tj_lit(j, ",\"start_unix_ns\":");
    cgi_tj_u(j, h->stats_start_unix_ns);
    cgi_tj_lit(j, "},\n\"clock_pair\":{\"realtime_ns\":");
    cgi_tj_u(j, h->pair_real_ns);
    cgi_tj_lit(j, ",\"monotonic_ns\":");
    cgi_tj_u(j, h->pair_mono_ns);
    cgi_tj_lit(j, ",\"gap_ns\":");
    cgi_tj_u(j, h->pair_gap_ns);
    cgi_tj_lit(j, ",\"boot_id\":");
    cgi_tj_str(j, h->boot_id, sizeof h->boot_id);
    cgi_tj_lit(j, ",\"time_namespace\":");
    cgi_tj_u(j, h->time_ns);
    if (j->one_clk->tsc) {
        cgi_tj_lit(j, ",\"tsc_calibrated_over_ns\":");
        cgi_tj_u(j, j->one_clk->span_ns);
    }
    cgi_tj_lit(j, "}");
}

static int cgi_tj_close(cgi_tj *j, const char *path)
{
    cgi_tj_flush(j);
    if (!j->failed) {
        j->n =
            (size_t)snprintf(j->b, CGI_TJ_BUF,
                             "\n],\n\"displayTimeUnit\":\"ns\",\n" CGI_OUT_TIMELINE_PRODUCER CALLGUARD_VERSION
                             "\",\"clock\":\"%s\",\"processes\":%zu,\"threads\":%zu,\"events\":%" PRIu64 ","
                             "\"dropped\":%" PRIu64 ",\"max_threads\":%u",
                             j->tsc ? "CLOCK_MONOTONIC (read as TSC ticks, one calibration a host, made over the run)"
                                    : "CLOCK_MONOTONIC",
                             j->processes, j->threads, j->kept, j->dropped, CGI_TRACE_MAX_THREADS);
        if (j->flights) j->n += (size_t)snprintf(j->b + j->n, CGI_TJ_BUF - j->n, ",\"in_flight\":%zu", j->flights);
        if (j->one) cgi_tj_process_other(j);
        cgi_tj_lit(j, "}}\n");
        cgi_tj_flush(j);
    }
    free(j->b), free(j->nm);
    int e = j->failed;
    if (e && j->file.own) {
        /* Never a half-written trace renamed into place. */
        fclose(j->file.f);
        if (j->file.tmp) unlink(j->file.tmp);
        free(j->file.tmp);
        j->file = (cgi_outfile){0};
    } else {
        char note[1024];
        int c = cgi_outfile_close(&j->file, path, "timeline", note, sizeof note);
        if (c == EEXIST) return cgi_fail(CG_EIO, "%s", note);
        if (!e) e = c;
    }
    if (e) return cgi_fail(CG_EIO, "cannot write trace %s: %s", path, strerror(e));
    return CG_OK;
}

/* One process's trace into path, or into a new file of the folder path
 * (`--trace DIR/`) that says which process, host and clock it is. */
static int cgi_tj_write_one(const char *path, const cgi_trace_view *v, const cgi_stats_region *r,
                            const cgi_trace_clock *clk, int own, char *buf, cgi_tj *sum)
{
    char *target = NULL;
    if (cgi_trace_is_folder(path)) {
        if (!v->h) return CG_OK; /* nothing recorded: no file */
        int rank = r && (r->h.rank_set & CGI_RANK_SET) ? (int)r->h.rank : -1;
        const char *host = v->h->host[0] ? v->h->host : r ? r->h.host : "";
        if (!(target = cgi_trace_folder_claim(path, host, rank, v->h->pid)))
            return cgi_fail(CG_EIO, "cannot write a trace in %s: %s", path, strerror(errno));
    }
    const char *out = target ? target : path;
    cgi_tj j;
    if (!cgi_tj_open(out, &j)) {
        int rc = cgi_fail(CG_EIO, "cannot write trace %s: %s", out, strerror(errno));
        if (target) unlink(target);
        free(target);
        return rc;
    }
    if (v->h) {
        j.tsc = (int)clk->tsc;
        if (target) j.one = v->h, j.one_r = r, j.one_clk = clk;
        cgi_tj_process(&j, v, r, clk, own, buf);
    }
    if (sum)
        sum->kept += j.kept, sum->dropped += j.dropped, sum->processes += j.processes, sum->threads += j.threads,
            sum->flights += j.flights;
    int rc = cgi_tj_close(&j, out);
    if (rc != CG_OK && target) unlink(target);
    free(target);
    return rc;
}

int cgi_trace_write_view(const char *path, const cgi_trace_view *v, const cgi_stats_region *r)
{
    cgi_trace_clock clk = {0};
    if (v->h) clk = (cgi_trace_clock){v->h->tsc, v->h->tick0, v->h->mono0, v->h->mult, 0};
    cgi_trace_clock_refine(&clk); /* this process's own clock, now */
    char *buf = malloc(CGI_TRACE_CHUNK_BYTES);
    if (!buf) return cgi_fail(CG_ENOMEM, "out of memory");
    int rc = cgi_tj_write_one(path, v, r, &clk, 1, buf, NULL);
    free(buf);
    return rc;
}

/* A trace file of the directory, when its process started, and the clock
 * its ticks are converted with. */
typedef struct cgi_tj_file {
    char *name;
    uint64_t start;
    cgi_trace_clock clk;
} cgi_tj_file;

static int cgi_tj_by_start(const void *a, const void *b)
{
    const cgi_tj_file *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Which CLOCK_MONOTONIC a file's events are in: one boot and time
 * namespace (trace_file.h); a file that cannot say is on its own. */
typedef struct cgi_tj_clock_id {
    char boot_id[40];
    uint64_t time_ns;
} cgi_tj_clock_id;

static int cgi_tj_same_clock(const cgi_tj_clock_id *a, const cgi_tj_clock_id *b)
{
    return a->boot_id[0] && a->time_ns && a->time_ns == b->time_ns && !strcmp(a->boot_id, b->boot_id);
}

/* The directory's trace files in start order (an exec'd image after the
 * one it replaced: its process_name comes last), each with the clock its
 * ticks are converted with: the calibration of the first process (lowest
 * tick0) of its boot and time namespace. The TSC is one counter for the
 * whole host, so one conversion keeps every process's events where they
 * happened relative to each other; each process's own calibration differs
 * a little, which would drift apart over a long run. Without a TSC, ticks
 * are CLOCK_MONOTONIC ns already. */
static cgi_tj_file *cgi_tj_list(DIR *d, const char *dir, size_t *count)
{
    size_t n = 0, cap = 16;
    cgi_tj_file *f = malloc(cap * sizeof *f);
    cgi_tj_clock_id *id = malloc(cap * sizeof *id);
    cgi_trace_header *h = malloc(sizeof *h);
    struct dirent *e;
    while (f && id && h && (e = readdir(d))) {
        cgi_file_name is;
        if (!cgi_file_name_parse(e->d_name, CGI_FILE_RINGS, &is)) continue;
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t got = pread(fd, h, sizeof *h, 0);
        close(fd);
        if (got != (ssize_t)sizeof *h || memcmp(h->magic, CGI_TRACE_MAGIC, sizeof CGI_TRACE_MAGIC) != 0 ||
            h->version != CGI_TRACE_VERSION)
            continue;
        if (n == cap) {
            cgi_tj_file *more = realloc(f, 2 * cap * sizeof *f);
            cgi_tj_clock_id *mid = more ? realloc(id, 2 * cap * sizeof *id) : NULL;
            if (more) f = more;
            if (!mid) break;
            id = mid, cap *= 2;
        }
        if (!(f[n].name = strdup(file))) break;
        f[n].start = h->stats_start_unix_ns;
        f[n].clk = (cgi_trace_clock){h->tsc, h->tick0, h->mono0, h->mult, 0};
        memcpy(id[n].boot_id, h->boot_id, sizeof id[n].boot_id);
        id[n].boot_id[sizeof id[n].boot_id - 1] = '\0';
        id[n++].time_ns = h->time_ns;
    }
    free(h);
    /* Each file's clock: the first of its own (few clocks: one a host),
     * made again over the whole run where it is this process's. */
    cgi_tj_clock_id mine;
    cgi_trace_clock_id(mine.boot_id, &mine.time_ns);
    for (size_t i = 0; f && id && i < n; i++) {
        if (!f[i].clk.tsc || !f[i].clk.mult || !id[i].boot_id[0] || !id[i].time_ns) continue;
        size_t first = i;
        for (size_t k = 0; k < i && first == i; k++)
            if (cgi_tj_same_clock(&id[k], &id[i]) && f[k].clk.tsc) first = k;
        if (first != i) continue; /* already set by the first of its clock */
        cgi_trace_clock best = f[i].clk;
        for (size_t k = i + 1; k < n; k++)
            if (f[k].clk.tsc && f[k].clk.mult && cgi_tj_same_clock(&id[k], &id[i]) && f[k].clk.tick0 < best.tick0)
                best = f[k].clk;
        if (cgi_tj_same_clock(&mine, &id[i])) cgi_trace_clock_refine(&best);
        for (size_t k = i; k < n; k++)
            if (k == i || (f[k].clk.tsc && f[k].clk.mult && cgi_tj_same_clock(&id[k], &id[i]))) f[k].clk = best;
    }
    free(id);
    if (f) qsort(f, n, sizeof *f, cgi_tj_by_start);
    *count = n;
    return f;
}

/* One file of the directory into j (one timeline), or into a file of its
 * own in the folder path. */
static void cgi_tj_merge_file(cgi_tj *j, const char *path, const cgi_tj_file *tf, const char *dir,
                              cgi_stats_entry *procs, size_t nprocs, cgi_trace_view *v, cgi_stats_region *region,
                              char *head, char *ringbuf, int *rc)
{
    int fd = open(tf->name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
        if (fd >= 0) close(fd);
        return;
    }
    size_t got = cgi_pread_full(fd, head, CGI_TRACE_DATA_OFFSET, 0);
    if (cgi_trace_view_of_file(head, got, fd, v) == 0) {
        const cgi_stats_entry *e = cgi_stats_find(procs, nprocs, v->h->pid, v->h->stats_start_unix_ns);
        const cgi_stats_region *r = e && cgi_stats_read_entry(dir, e, region) == 0 ? region : NULL;
        if (!path) {
            j->tsc |= (int)tf->clk.tsc;
            cgi_tj_process(j, v, r, &tf->clk, 0, ringbuf);
        } else if (cgi_tj_write_one(path, v, r, &tf->clk, 0, ringbuf, j) != CG_OK && *rc == CG_OK) {
            *rc = CG_EIO;
        }
    }
    close(fd);
}

int cg_trace_merge(const char *dir, const char *path, cg_trace_totals *totals)
{
    if (!path || !*path) return cgi_fail(CG_EINVAL, "trace path is empty: expected a file name");
    int folder = cgi_trace_is_folder(path);
    cgi_stats_entry *procs;
    size_t nprocs;
    int rc = cgi_stats_list_dir(dir, NULL, 0, &procs, &nprocs, NULL);
    if (rc != CG_OK) return rc;
    cgi_tj j = {0};
    cgi_trace_view *v = malloc(sizeof *v);
    /* The statistics file of the process a trace file belongs to, read
     * when its trace is written (names of the sites, the command). */
    cgi_stats_region *region = v ? calloc(1, sizeof *region) : NULL;
    /* A trace file's header and thread table, and one ring at a time. */
    char *head = region ? malloc(sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES) : NULL;
    char *ringbuf = head ? malloc(CGI_TRACE_CHUNK_BYTES) : NULL;
    DIR *d = ringbuf ? opendir(dir) : NULL;
    if (!d || (!folder && !cgi_tj_open(path, &j))) {
        rc = d         ? cgi_fail(CG_EIO, "cannot write trace %s: %s", path, strerror(errno))
             : ringbuf ? cgi_fail(CG_EIO, "cannot read statistics directory %s", dir)
                       : cgi_fail(CG_ENOMEM, "out of memory");
        if (d) closedir(d);
        free(v), free(region), free(head), free(ringbuf);
        cgi_stats_list_free(procs, nprocs);
        return rc;
    }
    size_t nfiles;
    cgi_tj_file *files = cgi_tj_list(d, dir, &nfiles);
    closedir(d);
    for (size_t fi = 0; files && fi < nfiles; fi++)
        cgi_tj_merge_file(&j, folder ? path : NULL, &files[fi], dir, procs, nprocs, v, region, head, ringbuf, &rc);
    for (size_t fi = 0; files && fi < nfiles; fi++)
        free(files[fi].name);
    free(files);
    free(v), free(region), free(head), free(ringbuf);
    cgi_stats_list_free(procs, nprocs);
    if (totals)
        *totals = (cg_trace_totals){.processes = j.processes,
                                    .threads = j.threads,
                                    .events = j.kept,
                                    .dropped = j.dropped,
                                    .events_per_thread = 0};
    if (folder) return rc; /* a file that failed said why (cgi_fail) */
    return cgi_tj_close(&j, path);
}
