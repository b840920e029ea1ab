/* Writing the timeline as Chrome trace-event JSON (the format Perfetto and
 * chrome://tracing open; docs/report.md shows it): this process's rings at
 * exit(), or every trace file of a `callguard run` directory merged into
 * one trace. Names come from each process's statistics records. */
#define _GNU_SOURCE
#include "trace.h"

#include "errors.h"
#include "report.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
    size_t nevents; /* written so far: the separator */
    uint64_t kept, dropped;
    size_t processes, threads;
} cgi_tj;

static void cgi_tj_sep(cgi_tj *j) { fputs(j->nevents++ ? ",\n" : "\n", j->out); }

/* Microseconds with nanosecond digits: one clock (CLOCK_MONOTONIC) for
 * every process of the host, so their events line up. */
static void cgi_tj_us(FILE *out, const char *key, uint64_t ns)
{
    fprintf(out, "\"%s\": %lu.%03lu", key, (unsigned long)(ns / 1000), (unsigned long)(ns % 1000));
}

static void cgi_tj_process(cgi_tj *j, const cgi_trace_view *v, const cgi_stats_region *r)
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
            uint64_t t0 = atomic_load_explicit(&e->t0, memory_order_relaxed);
            uint64_t call = atomic_load_explicit(&e->call_ns, memory_order_relaxed);
            uint64_t wait = atomic_load_explicit(&e->wait_ns, memory_order_relaxed);
            uint32_t rec = atomic_load_explicit(&e->rec, memory_order_relaxed);
            uint32_t fl = atomic_load_explicit(&e->flags, memory_order_relaxed);
            const cgi_stats_record *sr = rec < nrec && rec < CGI_STATS_MAX_RECORDS ? &r->r[rec] : NULL;
            const char *api = sr ? sr->api : "?", *name = sr ? sr->name : "?";
            if (wait) {
                /* The lock wait ended when the call entered the driver. */
                cgi_tj_sep(j);
                fprintf(out, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ",
                        fl & CGI_EV_WAIT_STALL ? "lock_wait,stall" : "lock_wait");
                char what[CGI_DOMAIN_NAME_MAX + 16];
                snprintf(what, sizeof what, "lock wait %s", sr && sr->domain[0] ? sr->domain : "?");
                cgi_tj_str(out, what, sizeof what);
                fprintf(out, ", \"pid\": %d, \"tid\": %d, ", pid, t->tid);
                cgi_tj_us(out, "ts", t0 > wait ? t0 - wait : 0);
                fputs(", ", out);
                cgi_tj_us(out, "dur", wait);
                fputs(", \"args\": {\"entry_point\": ", out);
                cgi_tj_str(out, name, CGI_NAME_MAX);
                fprintf(out, ", \"runtime_held\": %s, \"stall\": %s}}", fl & CGI_EV_HELD ? "true" : "false",
                        fl & CGI_EV_WAIT_STALL ? "true" : "false");
            }
            cgi_tj_sep(j);
            fprintf(out, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", fl & CGI_EV_CALL_STALL ? "call,stall" : "call");
            cgi_tj_str(out, name, CGI_NAME_MAX);
            fprintf(out, ", \"pid\": %d, \"tid\": %d, ", pid, t->tid);
            cgi_tj_us(out, "ts", t0);
            fputs(", ", out);
            cgi_tj_us(out, "dur", call);
            fputs(", \"args\": {\"api\": ", out);
            cgi_tj_str(out, api, CGI_API_NAME_MAX);
            fprintf(out, ", \"error\": %s, \"runtime_held\": %s, \"stall\": %s", fl & CGI_EV_ERROR ? "true" : "false",
                    fl & CGI_EV_HELD ? "true" : "false", fl & CGI_EV_CALL_STALL ? "true" : "false");
            if (wait) {
                fputs(", ", out);
                cgi_tj_us(out, "lock_wait_us", wait);
            }
            fputs("}}", out);
        }
    }
}

static FILE *cgi_tj_open(const char *path, cgi_tj *j)
{
    FILE *out = fopen(path, "w");
    if (!out) return NULL;
    *j = (cgi_tj){.out = out};
    fputs("{\"traceEvents\": [", out);
    return out;
}

static int cgi_tj_close(cgi_tj *j, const char *path)
{
    fprintf(j->out,
            "\n],\n\"displayTimeUnit\": \"ns\",\n\"otherData\": {\"producer\": \"callguard " CALLGUARD_VERSION
            "\", \"clock\": \"CLOCK_MONOTONIC\", \"processes\": %zu, \"threads\": %zu, \"events\": %lu, "
            "\"dropped\": %lu, \"events_per_thread\": %u, \"max_threads\": %u}}\n",
            j->processes, j->threads, (unsigned long)j->kept, (unsigned long)j->dropped, CGI_TRACE_EVENTS - 1,
            CGI_TRACE_MAX_THREADS);
    int bad = fflush(j->out) != 0 || ferror(j->out);
    if (fclose(j->out) != 0) bad = 1;
    if (bad) return cgi_fail(CG_EIO, "cannot write trace %s: %s", path, strerror(errno));
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
    if (v->h) cgi_tj_process(&j, v, cgi_stats);
    free(v);
    return cgi_tj_close(&j, path);
}

int cg_trace_merge(const char *dir, const char *path, cg_trace_totals *totals)
{
    if (!path || !*path) return cgi_fail(CG_EINVAL, "trace path is empty: expected a file name");
    cgi_proc_view *procs;
    size_t nprocs;
    int rc = cgi_stats_map_dir(dir, NULL, 0, &procs, &nprocs);
    if (rc != CG_OK) return rc;
    cgi_tj j;
    cgi_trace_view *v = malloc(sizeof *v);
    DIR *d = v ? opendir(dir) : NULL;
    if (!d || !cgi_tj_open(path, &j)) {
        rc = d ? cgi_fail(CG_EIO, "cannot write trace %s: %s", path, strerror(errno))
               : cgi_fail(CG_EIO, "cannot read statistics directory %s", dir);
        if (d) closedir(d);
        free(v);
        cgi_stats_unmap_dir(procs, nprocs);
        return rc;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".trace") != 0) continue;
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
            if (fd >= 0) close(fd);
            continue;
        }
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) continue;
        if (cgi_trace_view_of_file(p, (size_t)st.st_size, v) == 0) {
            const cgi_stats_region *r = NULL;
            for (size_t i = 0; i < nprocs; i++)
                if (procs[i].region->h.pid == v->h->pid &&
                    procs[i].region->h.start_unix_ns == v->h->stats_start_unix_ns)
                    r = procs[i].region;
            cgi_tj_process(&j, v, r);
        }
        munmap(p, (size_t)st.st_size);
    }
    closedir(d);
    free(v);
    cgi_stats_unmap_dir(procs, nprocs);
    if (totals)
        *totals = (cg_trace_totals){.processes = j.processes,
                                    .threads = j.threads,
                                    .events = j.kept,
                                    .dropped = j.dropped,
                                    .events_per_thread = CGI_TRACE_EVENTS - 1};
    return cgi_tj_close(&j, path);
}
