/* Reports: JSON for machines (schema in docs/report.md), a table for
 * people. Both are written from statistics regions, so one process's report
 * at exit and the CLI's merge of a whole process tree share this code. */
#define _GNU_SOURCE
#include "report.h"

#include "errors.h"
#include "names.h"
#include "trace_file.h"

#include <errno.h>
#include <string.h>

static void cgi_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(out, "\\%c", ch);
        else if (ch == '\n') fputs("\\n", out);
        else if (ch == '\t') fputs("\\t", out);
        else if (ch < 0x20) fprintf(out, "\\u%04x", ch);
        else fputc(ch, out);
    }
    fputc('"', out);
}

/* RUNNING, once the tree is gone, means the process ended without running
 * its exit handlers (a signal, _exit() or a crash) and nobody outside saw
 * how: its own parent reaped it. */
static const char *cgi_state_name(int state)
{
    switch (state) {
    case CGI_PROC_EXITED: return "exited";
    case CGI_PROC_SIGNALED: return "signaled";
    case CGI_PROC_EXECED: return "execed";
    default: return "unknown";
    }
}

typedef struct cgi_totals {
    uint64_t calls, nested, errors, total_ns, lock_wait_ns, stalls, stall_ns;
} cgi_totals;

static uint64_t cgi_ld(const _Atomic uint64_t *p) { return atomic_load_explicit(p, memory_order_relaxed); }

static void cgi_add(cgi_totals *t, const cg_counters *c)
{
    t->calls += cgi_ld(&c->calls);
    t->nested += cgi_ld(&c->nested);
    t->errors += cgi_ld(&c->errors);
    t->total_ns += cgi_ld(&c->total_ns);
    t->lock_wait_ns += cgi_ld(&c->lock_wait_ns);
    t->stalls += cgi_ld(&c->stalls);
    t->stall_ns += cgi_ld(&c->stall_ns);
}

static void cgi_sum(cgi_totals *all, const cgi_totals *t)
{
    all->calls += t->calls, all->nested += t->nested, all->errors += t->errors, all->total_ns += t->total_ns;
    all->lock_wait_ns += t->lock_wait_ns, all->stalls += t->stalls, all->stall_ns += t->stall_ns;
}

static uint32_t cgi_nrec(const cgi_stats_region *r)
{
    uint32_t n = atomic_load(&r->h.nrecords);
    return n > CGI_STATS_MAX_RECORDS ? CGI_STATS_MAX_RECORDS : n;
}

static cgi_totals cgi_proc_totals(const cgi_stats_region *r)
{
    cgi_totals t = {0};
    for (uint32_t i = 0; i < cgi_nrec(r); i++) cgi_add(&t, &r->r[i].c);
    return t;
}

static void cgi_exit_of(const cgi_proc_view *p, int *state, int *status)
{
    if (p->have_exit) {
        *state = p->exit_state;
        *status = p->exit_status;
    } else {
        *state = atomic_load(&p->region->h.state);
        *status = p->region->h.status;
    }
}

static void cgi_emit_json(FILE *out, const cgi_proc_view *procs, size_t n)
{
    cgi_totals all = {0};
    size_t nproc = 0;
    fprintf(out, "{\n  \"schema\": \"callguard-report\",\n  \"version\": 1,\n  \"processes\": [");
    for (size_t i = 0; i < n; i++) {
        const cgi_stats_region *r = procs[i].region;
        cgi_totals t = cgi_proc_totals(r);
        if (t.calls == 0) continue;
        int state, status;
        cgi_exit_of(&procs[i], &state, &status);
        fprintf(out, "%s\n    {\"pid\": %d, \"ppid\": %d, \"command\": ", nproc ? "," : "", r->h.pid, r->h.ppid);
        cgi_json_str(out, r->h.command);
        fprintf(out, ",\n     \"exit\": {\"state\": \"%s\"", cgi_state_name(state));
        if (state == CGI_PROC_EXITED) fprintf(out, ", \"status\": %d", status);
        if (state == CGI_PROC_SIGNALED) fprintf(out, ", \"signal\": %d", status);
        fputs("},", out);
        if (procs[i].have_trace)
            fprintf(out, "\n     \"trace\": {\"events\": %lu, \"dropped\": %lu},", (unsigned long)procs[i].trace_events,
                    (unsigned long)procs[i].trace_dropped);
        fprintf(out, "\n     \"sites\": [");
        size_t nsite = 0;
        for (uint32_t k = 0; k < cgi_nrec(r); k++) {
            const cgi_stats_record *rec = &r->r[k];
            const cg_counters *c = &rec->c;
            if (cgi_ld(&c->calls) == 0) continue;
            fprintf(out, "%s\n       {\"api\": ", nsite++ ? "," : "");
            cgi_json_str(out, rec->api);
            fprintf(out, ", \"name\": ");
            cgi_json_str(out, rec->name);
            fprintf(out,
                    ", \"calls\": %lu, \"nested\": %lu, \"errors\": %lu, \"total_ns\": %lu, \"max_ns\": %lu, "
                    "\"lock_wait_ns\": %lu, \"stalls\": %lu, \"stall_ns\": %lu,\n        \"policy\": {\"transition\": "
                    "\"%s\", \"blocking\": %s, \"serialize\": ",
                    (unsigned long)cgi_ld(&c->calls), (unsigned long)cgi_ld(&c->nested), (unsigned long)cgi_ld(&c->errors),
                    (unsigned long)cgi_ld(&c->total_ns), (unsigned long)cgi_ld(&c->max_ns),
                    (unsigned long)cgi_ld(&c->lock_wait_ns), (unsigned long)cgi_ld(&c->stalls),
                    (unsigned long)cgi_ld(&c->stall_ns), cgi_transition_name(rec->transition),
                    rec->blocking ? "true" : "false");
            if (rec->domain[0]) cgi_json_str(out, rec->domain);
            else fputs("null", out);
            fprintf(out, ", \"scope\": \"%s\"}}", cgi_scope_name(rec->scope));
        }
        fprintf(out, "\n     ],\n     \"totals\": {\"calls\": %lu, \"nested\": %lu, \"errors\": %lu, \"total_ns\": %lu, "
                     "\"lock_wait_ns\": %lu, \"stalls\": %lu, \"stall_ns\": %lu}}",
                (unsigned long)t.calls, (unsigned long)t.nested, (unsigned long)t.errors, (unsigned long)t.total_ns,
                (unsigned long)t.lock_wait_ns, (unsigned long)t.stalls, (unsigned long)t.stall_ns);
        cgi_sum(&all, &t);
        nproc++;
    }
    fprintf(out,
            "%s],\n  \"totals\": {\"processes\": %zu, \"calls\": %lu, \"nested\": %lu, \"errors\": %lu, \"total_ns\": "
            "%lu, \"lock_wait_ns\": %lu, \"stalls\": %lu, \"stall_ns\": %lu}\n}\n",
            nproc ? "\n  " : "", nproc, (unsigned long)all.calls, (unsigned long)all.nested, (unsigned long)all.errors,
            (unsigned long)all.total_ns, (unsigned long)all.lock_wait_ns, (unsigned long)all.stalls,
            (unsigned long)all.stall_ns);
}

static double cgi_ms(uint64_t ns) { return (double)ns / 1e6; }

static void cgi_emit_text(FILE *out, const cgi_proc_view *procs, size_t n)
{
    cgi_totals all = {0};
    size_t nproc = 0;
    for (size_t i = 0; i < n; i++) {
        const cgi_stats_region *r = procs[i].region;
        cgi_totals t = cgi_proc_totals(r);
        if (t.calls == 0) continue;
        int state, status;
        cgi_exit_of(&procs[i], &state, &status);
        char ex[48];
        if (state == CGI_PROC_EXITED) snprintf(ex, sizeof ex, "exit %d", status);
        else if (state == CGI_PROC_SIGNALED) snprintf(ex, sizeof ex, "killed by signal %d", status);
        else if (state == CGI_PROC_EXECED) snprintf(ex, sizeof ex, "replaced by exec");
        else snprintf(ex, sizeof ex, "ended without exit handlers");
        fprintf(out, "callguard: pid %d (%s): %.200s\n", r->h.pid, ex, r->h.command);
        /* The api column is as wide as the longest API name of this process. */
        int apiw = 4;
        for (uint32_t k = 0; k < cgi_nrec(r); k++) {
            int len = (int)strnlen(r->r[k].api, sizeof r->r[k].api);
            if (len > apiw && cgi_ld(&r->r[k].c.calls)) apiw = len;
        }
        fprintf(out, "  %-*s %-36s %10s %8s %8s %11s %10s %12s %7s  %s\n", apiw, "api", "entry point", "calls", "nested",
                "errors", "total ms", "max ms", "lock wait ms", "stalls", "policy");
        for (uint32_t k = 0; k < cgi_nrec(r); k++) {
            const cgi_stats_record *rec = &r->r[k];
            const cg_counters *c = &rec->c;
            if (cgi_ld(&c->calls) == 0) continue;
            char policy[128];
            int len = snprintf(policy, sizeof policy, "transition=%s", cgi_transition_name(rec->transition));
            if (rec->domain[0])
                len += snprintf(policy + len, sizeof policy - (size_t)len, " serialize=%s%s", rec->domain,
                                rec->scope == CG_SCOPE_HANDLE ? ":handle" : "");
            if (rec->blocking) snprintf(policy + len, sizeof policy - (size_t)len, " blocking");
            fprintf(out, "  %-*s %-36s %10lu %8lu %8lu %11.3f %10.3f %12.3f %7lu  %s\n", apiw, rec->api, rec->name,
                    (unsigned long)cgi_ld(&c->calls), (unsigned long)cgi_ld(&c->nested),
                    (unsigned long)cgi_ld(&c->errors), cgi_ms(cgi_ld(&c->total_ns)), cgi_ms(cgi_ld(&c->max_ns)),
                    cgi_ms(cgi_ld(&c->lock_wait_ns)), (unsigned long)cgi_ld(&c->stalls), policy);
        }
        if (procs[i].have_trace)
            fprintf(out, "  timeline: %lu events kept, %lu dropped", (unsigned long)procs[i].trace_events,
                    (unsigned long)procs[i].trace_dropped);
        if (procs[i].have_trace && procs[i].trace_dropped)
            fprintf(out, " (each thread keeps its last %u calls; threads past the first %u keep none)",
                    CGI_TRACE_EVENTS - 1, CGI_TRACE_MAX_THREADS);
        if (procs[i].have_trace) fputc('\n', out);
        cgi_sum(&all, &t);
        nproc++;
    }
    fprintf(out,
            "callguard: %zu process%s, %lu calls (%lu nested, %lu errors), %.3f ms in the driver, %.3f ms waiting "
            "for locks, %lu stalls\n",
            nproc, nproc == 1 ? "" : "es", (unsigned long)all.calls, (unsigned long)all.nested,
            (unsigned long)all.errors, cgi_ms(all.total_ns), cgi_ms(all.lock_wait_ns), (unsigned long)all.stalls);
}

static int cgi_report_emit(FILE *out, const cgi_proc_view *procs, size_t n, cg_report_format format)
{
    if (format == CG_REPORT_TEXT) cgi_emit_text(out, procs, n);
    else cgi_emit_json(out, procs, n);
    if (fflush(out) != 0 || ferror(out)) return cgi_fail(CG_EIO, "cannot write the report");
    return CG_OK;
}

int cgi_report_to(const char *path, const cgi_proc_view *procs, size_t n, cg_report_format format)
{
    if (!path || !*path) return cgi_fail(CG_EINVAL, "report path is empty: expected a file name or '-'");
    if (format != CG_REPORT_JSON && format != CG_REPORT_TEXT)
        return cgi_fail(CG_EINVAL, "report format %d: expected CG_REPORT_JSON or CG_REPORT_TEXT", (int)format);
    FILE *out = strcmp(path, "-") == 0 ? stderr : fopen(path, "w");
    if (!out) return cgi_fail(CG_EIO, "cannot write report %s: %s", path, strerror(errno));
    int rc = cgi_report_emit(out, procs, n, format);
    if (out != stderr && fclose(out) != 0 && rc == CG_OK)
        rc = cgi_fail(CG_EIO, "cannot write report %s: %s", path, strerror(errno));
    return rc;
}
