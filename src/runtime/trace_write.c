/* Writing the timeline as Chrome trace-event JSON (the format Perfetto and
 * chrome://tracing open; docs/report.md shows it): this process's rings at
 * exit(), or every trace file of a `callguard run` directory merged into
 * one trace. Names come from each process's statistics records. */
#define _GNU_SOURCE
#include "trace.h"

#include "errors.h"
#include "outfile.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void cgi_tj_str(FILE *out, const char *s, size_t max)
{
    fputc('"', out);
    for (size_t i = 0; i < max && s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

typedef struct cgi_tj {
    FILE *out;
    cgi_outfile file; /* out is file.f: a new file renamed into place (outfile.h) */
    size_t nevents; /* written so far: the separator */
    uint64_t kept, dropped;
    size_t processes, threads;
    int tsc; /* the events' ticks were TSC counts */
} cgi_tj;

/* One event's text, built without stdio (a trace holds up to 65,535
 * events per thread; fprintf per field cost about 0.7 us an event). The
 * longest line: fixed text, five numbers, and three names of at most
 * CGI_NAME_MAX, CGI_API_NAME_MAX and CGI_DOMAIN_NAME_MAX bytes escaped to
 * at most 6 bytes each. */
typedef struct cgi_ln {
    char b[1024 + 6 * (2 * CGI_NAME_MAX + CGI_API_NAME_MAX + CGI_DOMAIN_NAME_MAX)];
    size_t n;
} cgi_ln;

static void cgi_ln_s(cgi_ln *l, const char *s)
{
    size_t k = strlen(s);
    memcpy(l->b + l->n, s, k);
    l->n += k;
}

static void cgi_ln_u(cgi_ln *l, uint64_t v)
{
    char t[24];
    int i = 0;
    do t[i++] = (char)('0' + v % 10);
    while (v /= 10);
    while (i) l->b[l->n++] = t[--i];
}

/* Nanoseconds as microseconds with three decimals. One clock
 * (CLOCK_MONOTONIC) for every process of the host, so their events line up. */
static void cgi_ln_us(cgi_ln *l, uint64_t ns)
{
    cgi_ln_u(l, ns / 1000);
    unsigned f = (unsigned)(ns % 1000);
    l->b[l->n++] = '.';
    l->b[l->n++] = (char)('0' + f / 100);
    l->b[l->n++] = (char)('0' + f / 10 % 10);
    l->b[l->n++] = (char)('0' + f % 10);
}

/* A string's JSON escaping, without the quotes. */
static void cgi_ln_q(cgi_ln *l, const char *s, size_t max)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < max && s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            l->b[l->n++] = '\\';
            l->b[l->n++] = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {
            memcpy(l->b + l->n, "\\u00", 4);
            l->n += 4;
            l->b[l->n++] = hex[ch >> 4];
            l->b[l->n++] = hex[ch & 15];
        } else {
            l->b[l->n++] = (char)ch;
        }
    }
}

static void cgi_tj_sep(cgi_tj *j) { fputs(j->nevents++ ? ",\n" : "\n", j->out); }

/* A process's timeline. fd >= 0: v is the header and thread table of that
 * trace file, a ring that is there is marked by a non-NULL v->ring[i], and
 * each ring is read by pread into buf when it is written (never mapped: a
 * file cut short meanwhile is a short read, not SIGBUS). fd < 0: the rings
 * are in memory (this process's own). */
static void cgi_tj_process(cgi_tj *j, const cgi_trace_view *v, const cgi_stats_region *r, const cgi_trace_clock *clk,
                           int fd, cgi_trace_event *buf)
{
    FILE *out = j->out;
    int pid = v->h->pid;
    uint64_t kept, dropped;
    cgi_trace_count(v, &kept, &dropped);
    if (kept == 0 && dropped == 0) return;
    j->kept += kept, j->dropped += dropped, j->processes++;
    cgi_tj_sep(j);
    fprintf(out, "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": ", pid,
            pid);
    cgi_tj_str(out, r && r->h.command[0] ? r->h.command : "?", 200);
    fputs("}}", out);
    if (dropped) {
        cgi_tj_sep(j);
        fprintf(out,
                "{\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": %d, \"tid\": %d, \"args\": {\"labels\": "
                "\"callguard dropped %lu events\"}}",
                pid, pid, (unsigned long)dropped);
    }
    uint32_t nrec = r ? atomic_load(&r->h.nrecords) : 0;
    uint32_t nthreads = atomic_load(&v->h->nthreads);
    for (uint32_t i = 0; i < nthreads && i < CGI_TRACE_MAX_THREADS; i++) {
        const cgi_trace_event *ring = v->ring[i];
        if (!ring) continue;
        if (fd >= 0) {
            off_t at = (off_t)CGI_TRACE_RING_OFFSET(i);
            if (cgi_pread_full(fd, buf, CGI_TRACE_RING_BYTES, at) != CGI_TRACE_RING_BYTES) {
                fprintf(stderr, "callguard: the trace file of process %d was cut short while read: thread %d's events "
                                "are left out of the timeline\n", pid, v->threads[i].tid);
                continue;
            }
            ring = buf;
        }
        const cgi_trace_thread *t = &v->threads[i];
        uint64_t w = atomic_load_explicit(&t->written, memory_order_acquire);
        uint64_t k = w < CGI_TRACE_EVENTS ? w : CGI_TRACE_EVENTS - 1;
        j->threads++;
        cgi_tj_sep(j);
        fprintf(out, "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %d, \"args\": {\"name\": ", pid,
                t->tid);
        char tname[17];
        cgi_trace_thread_name(t, tname);
        cgi_tj_str(out, tname[0] ? tname : "?", sizeof tname);
        fputs("}}", out);
        for (uint64_t n = w - k; n < w; n++) {
            const cgi_trace_event *e = &ring[n & (CGI_TRACE_EVENTS - 1)];
            uint64_t t0 = cgi_trace_ns(clk, atomic_load_explicit(&e->t0, memory_order_relaxed));
            uint64_t call = atomic_load_explicit(&e->call_ns, memory_order_relaxed);
            uint64_t wait = atomic_load_explicit(&e->wait_ns, memory_order_relaxed);
            uint32_t rec = atomic_load_explicit(&e->rec, memory_order_relaxed);
            uint32_t fl = atomic_load_explicit(&e->flags, memory_order_relaxed);
            const cgi_stats_record *sr = rec < nrec && rec < CGI_STATS_MAX_RECORDS ? &r->r[rec] : NULL;
            const char *api = sr ? sr->api : "?", *name = sr ? sr->name : "?";
            cgi_ln l = {.n = 0};
            if (wait) {
                /* The lock wait ended when the call entered the driver. */
                cgi_ln_s(&l, j->nevents++ ? ",\n{\"ph\": \"X\", \"cat\": \"" : "\n{\"ph\": \"X\", \"cat\": \"");
                cgi_ln_s(&l, fl & CGI_EV_WAIT_STALL ? "lock_wait,stall\", \"name\": \"lock wait "
                                                    : "lock_wait\", \"name\": \"lock wait ");
                cgi_ln_q(&l, sr && sr->domain[0] ? sr->domain : "?", CGI_DOMAIN_NAME_MAX);
                cgi_ln_s(&l, "\", \"pid\": ");
                cgi_ln_u(&l, (uint64_t)pid);
                cgi_ln_s(&l, ", \"tid\": ");
                cgi_ln_u(&l, (uint64_t)t->tid);
                cgi_ln_s(&l, ", \"ts\": ");
                cgi_ln_us(&l, t0 > wait ? t0 - wait : 0);
                cgi_ln_s(&l, ", \"dur\": ");
                cgi_ln_us(&l, wait);
                cgi_ln_s(&l, ", \"args\": {\"entry_point\": \"");
                cgi_ln_q(&l, name, CGI_NAME_MAX);
                cgi_ln_s(&l, fl & CGI_EV_HELD ? "\", \"runtime_held\": true" : "\", \"runtime_held\": false");
                cgi_ln_s(&l, fl & CGI_EV_WAIT_STALL ? ", \"stall\": true}}" : ", \"stall\": false}}");
            }
            cgi_ln_s(&l, j->nevents++ ? ",\n{\"ph\": \"X\", \"cat\": \"" : "\n{\"ph\": \"X\", \"cat\": \"");
            cgi_ln_s(&l, fl & CGI_EV_CALL_STALL ? "call,stall\", \"name\": \"" : "call\", \"name\": \"");
            cgi_ln_q(&l, name, CGI_NAME_MAX);
            cgi_ln_s(&l, "\", \"pid\": ");
            cgi_ln_u(&l, (uint64_t)pid);
            cgi_ln_s(&l, ", \"tid\": ");
            cgi_ln_u(&l, (uint64_t)t->tid);
            cgi_ln_s(&l, ", \"ts\": ");
            cgi_ln_us(&l, t0);
            cgi_ln_s(&l, ", \"dur\": ");
            cgi_ln_us(&l, call);
            cgi_ln_s(&l, ", \"args\": {\"api\": \"");
            cgi_ln_q(&l, api, CGI_API_NAME_MAX);
            cgi_ln_s(&l, fl & CGI_EV_ERROR ? "\", \"error\": true" : "\", \"error\": false");
            cgi_ln_s(&l, fl & CGI_EV_HELD ? ", \"runtime_held\": true" : ", \"runtime_held\": false");
            cgi_ln_s(&l, fl & CGI_EV_CALL_STALL ? ", \"stall\": true" : ", \"stall\": false");
            if (wait) {
                cgi_ln_s(&l, ", \"lock_wait_us\": ");
                cgi_ln_us(&l, wait);
            }
            cgi_ln_s(&l, "}}");
            fwrite_unlocked(l.b, 1, l.n, out);
        }
    }
}

static FILE *cgi_tj_open(const char *path, cgi_tj *j)
{
    cgi_outfile file;
    int e = cgi_outfile_open(path, &file);
    if (e) return errno = e, NULL;
    FILE *out = file.f;
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    *j = (cgi_tj){.out = out, .file = file};
    fputs("{\"traceEvents\": [", out);
    return out;
}

static int cgi_tj_close(cgi_tj *j, const char *path)
{
    fprintf(j->out,
            "\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"producer\": \"callguard " CALLGUARD_VERSION
            "\", \"clock\": \"%s\", \"processes\": %zu, \"threads\": %zu, \"events\": %lu, "
            "\"dropped\": %lu, \"events_per_thread\": %u, \"max_threads\": %u}}\n",
            j->tsc ? "CLOCK_MONOTONIC (read as TSC ticks, one calibration for all)" : "CLOCK_MONOTONIC", j->processes,
            j->threads, (unsigned long)j->kept, (unsigned long)j->dropped, CGI_TRACE_EVENTS - 1,
            CGI_TRACE_MAX_THREADS);
    int e = cgi_outfile_close(&j->file, path);
    if (e) return cgi_fail(CG_EIO, "cannot write trace %s: %s", path, strerror(e));
    return CG_OK;
}

int cgi_trace_write_self(const char *path)
{
    cgi_trace_view *v = malloc(sizeof *v);
    if (!v) return cgi_fail(CG_ENOMEM, "out of memory");
    cgi_trace_self_view(v);
    cgi_tj j;
    if (!cgi_tj_open(path, &j)) {
        free(v);
        return cgi_fail(CG_EIO, "cannot write trace %s: %s", path, strerror(errno));
    }
    if (v->h) {
        cgi_trace_clock clk = {v->h->tsc, v->h->tick0, v->h->mono0, v->h->mult};
        j.tsc = (int)clk.tsc;
        cgi_tj_process(&j, v, cgi_stats, &clk, -1, NULL);
    }
    free(v);
    return cgi_tj_close(&j, path);
}

/* A trace file of the directory, and when its process started. */
typedef struct cgi_tj_file {
    char *name;
    uint64_t start;
} cgi_tj_file;

static int cgi_tj_by_start(const void *a, const void *b)
{
    const cgi_tj_file *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The directory's trace files in start order (an exec'd image after the
 * one it replaced: its process_name comes last), and the clock every event
 * of the merged trace is converted with: the calibration of the process
 * that started first. The TSC is one counter for the whole host, so one
 * conversion keeps every process's events where they happened relative to
 * each other; each process's own calibration differs a little, which
 * would drift apart over a long run. Without a TSC, ticks are
 * CLOCK_MONOTONIC ns already. */
static cgi_tj_file *cgi_tj_list(DIR *d, const char *dir, size_t *count, cgi_trace_clock *clk)
{
    *clk = (cgi_trace_clock){0};
    size_t n = 0, cap = 16;
    cgi_tj_file *f = malloc(cap * sizeof *f);
    struct dirent *e;
    while (f && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".trace") != 0) continue;
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        cgi_trace_header h;
        ssize_t got = pread(fd, &h, sizeof h, 0);
        close(fd);
        if (got != (ssize_t)sizeof h || memcmp(h.magic, CGI_TRACE_MAGIC, sizeof CGI_TRACE_MAGIC) != 0 ||
            h.version != CGI_TRACE_VERSION)
            continue;
        if (h.tsc && h.mult && (!clk->tsc || h.tick0 < clk->tick0)) *clk = (cgi_trace_clock){1, h.tick0, h.mono0, h.mult};
        if (n == cap) {
            cgi_tj_file *more = realloc(f, (cap *= 2) * sizeof *f);
            if (!more) break;
            f = more;
        }
        if (!(f[n].name = strdup(file))) break;
        f[n++].start = h.stats_start_unix_ns;
    }
    if (f) qsort(f, n, sizeof *f, cgi_tj_by_start);
    *count = n;
    return f;
}

int cg_trace_merge(const char *dir, const char *path, cg_trace_totals *totals)
{
    if (!path || !*path) return cgi_fail(CG_EINVAL, "trace path is empty: expected a file name");
    cgi_stats_entry *procs;
    size_t nprocs;
    int rc = cgi_stats_list_dir(dir, NULL, 0, &procs, &nprocs, NULL);
    if (rc != CG_OK) return rc;
    cgi_tj j;
    cgi_trace_view *v = malloc(sizeof *v);
    /* The statistics file of the process a trace file belongs to, read
     * when its trace is written (names of the sites, the command). */
    cgi_stats_region *region = v ? calloc(1, sizeof *region) : NULL;
    /* A trace file's header and thread table, and one ring at a time. */
    char *head = region ? malloc(sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES) : NULL;
    cgi_trace_event *ringbuf = head ? malloc(CGI_TRACE_RING_BYTES) : NULL;
    DIR *d = ringbuf ? opendir(dir) : NULL;
    if (!d || !cgi_tj_open(path, &j)) {
        rc = d ? cgi_fail(CG_EIO, "cannot write trace %s: %s", path, strerror(errno))
             : ringbuf ? cgi_fail(CG_EIO, "cannot read statistics directory %s", dir)
                       : cgi_fail(CG_ENOMEM, "out of memory");
        if (d) closedir(d);
        free(v), free(region), free(head), free(ringbuf);
        cgi_stats_list_free(procs, nprocs);
        return rc;
    }
    cgi_trace_clock clk;
    size_t nfiles;
    cgi_tj_file *files = cgi_tj_list(d, dir, &nfiles, &clk);
    closedir(d);
    j.tsc = (int)clk.tsc;
    for (size_t fi = 0; files && fi < nfiles; fi++) {
        const char *file = files[fi].name;
        int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
            if (fd >= 0) close(fd);
            continue;
        }
        size_t got = cgi_pread_full(fd, head, sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES, 0);
        if (cgi_trace_view_of_file(head, got, v) == 0) {
            /* The rings the file is long enough for; each is read when written. */
            uint32_t nt = atomic_load(&v->h->nthreads);
            for (uint32_t i = 0; i < nt && i < CGI_TRACE_MAX_THREADS; i++)
                if (atomic_load(&v->threads[i].ready) && CGI_TRACE_RING_OFFSET(i) + CGI_TRACE_RING_BYTES <= (size_t)st.st_size)
                    v->ring[i] = ringbuf;
            const cgi_stats_entry *e = cgi_stats_find(procs, nprocs, v->h->pid, v->h->stats_start_unix_ns);
            const cgi_stats_region *r = e && cgi_stats_read_entry(dir, e, region) == 0 ? region : NULL;
            /* A file without a TSC clock (another machine's? not here) keeps its own. */
            cgi_trace_clock own = {v->h->tsc, v->h->tick0, v->h->mono0, v->h->mult};
            cgi_tj_process(&j, v, r, v->h->tsc && clk.tsc ? &clk : &own, fd, ringbuf);
        }
        close(fd);
    }
    for (size_t fi = 0; files && fi < nfiles; fi++) free(files[fi].name);
    free(files);
    free(v), free(region), free(head), free(ringbuf);
    cgi_stats_list_free(procs, nprocs);
    if (totals)
        *totals = (cg_trace_totals){.processes = j.processes,
                                    .threads = j.threads,
                                    .events = j.kept,
                                    .dropped = j.dropped,
                                    .events_per_thread = CGI_TRACE_EVENTS - 1};
    return cgi_tj_close(&j, path);
}
