/* The JSON report, for machines (schema in docs/report.md): one process's
 * entry of "processes" at a time, then the advice and the totals. */
#define _GNU_SOURCE
#include "internal.h"

#include "../common/names.h"
#include "outfile.h"
#include "pypackage.h"
#include "../common/utf8.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void cgi_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", out);
        else if (ch == '\t')
            fputs("\\t", out);
        else if (ch < 0x20)
            fprintf(out, "\\u%04x", ch);
        else if (ch < 0x80)
            fputc(ch, out);
        else {
            size_t n = cgi_utf8_seq(s, strnlen(s, 4));
            if (n)
                fwrite(s, 1, n, out), s += n - 1;
            else
                fputs(CGI_UTF8_REPLACEMENT, out);
        }
    }
    fputc('"', out);
}

/* A JSON string, or null for NULL. */
void cgi_json_str_or_null(FILE *out, const char *s)
{
    if (s)
        cgi_json_str(out, s);
    else
        fputs("null", out);
}

/* One member of an object after its first: `, "key": ` and the string v
 * (callguard's keys need no escaping). */
void cgi_json_field_str(FILE *out, const char *key, const char *v)
{
    fprintf(out, ", \"%s\": ", key);
    cgi_json_str(out, v);
}

/* The same, null for NULL. */
void cgi_json_behind(FILE *out, const cgi_hang_call *a, const char *quirk)
{
    fputs(", \"waits_behind\": ", out);
    if (!quirk) {
        fputs("null", out);
        return;
    }
    fprintf(out, "{\"tid\": %d", a->tid);
    cgi_json_field_str(out, "name", a->name);
    cgi_json_field_str(out, "quirk", quirk);
    fputc('}', out);
}

void cgi_json_field_str_or_null(FILE *out, const char *key, const char *v)
{
    fprintf(out, ", \"%s\": ", key);
    cgi_json_str_or_null(out, v);
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

static void cgi_json_codes(FILE *out, const cgi_code_list *l)
{
    uint64_t oe, os;
    cgi_codes_other(l, &oe, &os);
    fputs(",\n        \"results\": [", out);
    size_t k = 0;
    for (size_t x = 0; x < l->n; x++, k++) {
        fprintf(out, "%s{\"name\": ", k ? ", " : "");
        cgi_json_str(out, l->v[x].name);
        fprintf(out, ", \"code\": %d, \"calls\": %" PRIu64 ", \"kind\": \"%s\"}", (int)l->v[x].code, l->v[x].count,
                l->v[x].state ? "state" : "error");
    }
    if (oe)
        fprintf(out, "%s{\"name\": \"other\", \"code\": null, \"calls\": %" PRIu64 ", \"kind\": \"error\"}",
                k++ ? ", " : "", oe);
    if (os)
        fprintf(out, "%s{\"name\": \"other\", \"code\": null, \"calls\": %" PRIu64 ", \"kind\": \"state\"}",
                k++ ? ", " : "", os);
    fputc(']', out);
}

static const char *cgi_slot_state_name(const cgi_slot *slot)
{
    return cgi_waiting(slot) ? "waiting_for_lock" : "inside";
}

/* A hung call's Python line, {"file", "line", "function"} and, where it
 * was read another way than the first, "read_via": "/proc/self/mem"; or null. */
void cgi_json_hang_python(FILE *out, const cgi_hang_call *e)
{
    if (!e || !e->py_file[0]) {
        fputs("null", out);
        return;
    }
    fputs("{\"file\": ", out);
    cgi_json_str(out, e->py_file);
    fprintf(out, ", \"line\": %d", e->py_line);
    cgi_json_field_str_or_null(out, "function", e->py_func[0] ? e->py_func : NULL);
    if (e->py_via == CGI_PY_VIA_PROC_MEM) fputs(", \"read_via\": \"/proc/self/mem\"", out);
    fputc('}', out);
}

/* A hung call's "runtime" (null: none) and whether it "holds_runtime"
 * (true, false, null: not known). */
void cgi_json_hang_runtime(FILE *out, const cgi_hang_call *e)
{
    cgi_json_field_str_or_null(out, "runtime", e->runtime[0] ? e->runtime : NULL);
    fprintf(out, ", \"holds_runtime\": %s",
            e->held == CGI_HELD_YES  ? "true"
            : e->held == CGI_HELD_NO ? "false"
                                     : "null");
}

void cgi_json_hang_args(FILE *out, const cgi_hang_call *e)
{
    if (!e || !e->nargs) {
        fputs(", \"args\": null", out);
        return;
    }
    fputs(", \"args\": {", out);
    for (uint32_t i = 0; i < e->nargs && i < CG_WAIT_ARGS_MAX; i++) {
        char name[sizeof e->arg[i].name + 1], value[sizeof e->arg[i].value + 1];
        snprintf(name, sizeof name, "%.*s", (int)sizeof e->arg[i].name, e->arg[i].name);
        snprintf(value, sizeof value, "%.*s", (int)sizeof e->arg[i].value, e->arg[i].value);
        if (i) fputs(", ", out);
        cgi_json_str(out, name);
        fputs(": ", out);
        cgi_json_str(out, value);
    }
    fputc('}', out);
}

/* A stall's "python": where its Python code made the call, the first frame
 * outside the standard library ("from") and the module being imported
 * ("importing") where it has them, and the package it is charged to. */
static void cgi_json_stall_python(FILE *out, const cgi_stall *st)
{
    if (!st->py_file[0] && !st->py_func[0]) {
        fputs("null", out);
        return;
    }
    fprintf(out, "{\"file\": ");
    cgi_json_str(out, st->py_file);
    fprintf(out, ", \"line\": %d", st->py_line);
    cgi_json_field_str(out, "function", st->py_func);
    if (st->from_file[0]) {
        fprintf(out, ", \"from\": {\"file\": ");
        cgi_json_str(out, st->from_file);
        fprintf(out, ", \"line\": %d", st->from_line);
        cgi_json_field_str(out, "function", st->from_func);
        fputc('}', out);
    }
    if (st->import_file[0]) cgi_json_field_str(out, "importing", st->import_file);
    cgi_py_pkg pkg;
    if (cgi_stall_package(st, &pkg)) {
        cgi_json_field_str(out, "package", pkg.package);
        cgi_json_field_str_or_null(out, "distribution", pkg.distribution[0] ? pkg.distribution : NULL);
        cgi_json_field_str_or_null(out, "version", pkg.version[0] ? pkg.version : NULL);
    }
    fputc('}', out);
}

static void cgi_json_stalls_and_in_flight(FILE *out, const cgi_stats_region *r)
{
    const cgi_stall *v[CGI_STATS_MAX_STALLS];
    size_t n = cgi_stalls_worst_first(r, v);
    fprintf(out, ",\n     \"stalls\": [");
    for (size_t i = 0; i < n; i++) {
        const cgi_stall *st = v[i];
        fprintf(out, "%s\n       {\"api\": ", i ? "," : "");
        cgi_json_str(out, st->api);
        cgi_json_field_str(out, "name", st->name);
        fprintf(out,
                ", \"ns\": %" PRIu64 ", \"call_ns\": %" PRIu64 ", \"lock_wait_ns\": %" PRIu64
                ", \"entered_ns\": %" PRIu64 ", \"tid\": %d",
                st->ns, st->call_ns, st->wait_ns, st->at_ns, st->tid);
        cgi_json_field_str(out, "thread", st->thread);
        cgi_json_field_str(out, "runtime", st->runtime);
        if (st->waiters >= 0)
            fprintf(out, ", \"waiters\": %d", st->waiters);
        else
            fputs(", \"waiters\": null", out);
        fprintf(out, ",\n        \"python\": ");
        cgi_json_stall_python(out, st);
        fputc('}', out);
    }
    fprintf(out, "%s],\n     \"stalls_dropped\": %" PRIu64 ",\n     \"in_flight\": [", n ? "\n     " : "",
            atomic_load(&r->h.stalls_dropped));
    size_t k = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        const cgi_slot *slot = &r->slot[i];
        if (!cgi_in_flight(slot)) continue;
        const cgi_stats_record *rec = cgi_slot_record(r, slot);
        fprintf(out, "%s\n       {\"api\": ", k++ ? "," : "");
        cgi_json_str(out, rec ? rec->api : "?");
        cgi_json_field_str(out, "name", rec ? rec->name : "?");
        fprintf(out, ", \"tid\": %d", atomic_load(&slot->tid));
        char name[sizeof slot->thread + 1];
        snprintf(name, sizeof name, "%.*s", (int)sizeof slot->thread, slot->thread);
        cgi_json_field_str(out, "thread", name);
        fprintf(out, ", \"state\": \"%s\", \"entered_ns\": %" PRIu64, cgi_slot_state_name(slot),
                cgi_entered_ns(r, slot));
        const cgi_hang_call *known = cgi_hang_of_slot(r, slot);
        cgi_json_hang_args(out, known);
        fputs(",\n        \"python\": ", out);
        cgi_json_hang_python(out, known);
        fputc('}', out);
    }
    fprintf(out, "%s],\n     \"in_flight_unknown_threads\": %u", k ? "\n     " : "",
            (unsigned)atomic_load(&r->h.threads_unslotted));
}

/* ---- how times were taken; the last hang report (docs/report.md, "Hangs") ---------- */

static void cgi_json_timing_and_hang(FILE *out, const cgi_stats_region *r)
{
    fprintf(out, ",\n     \"timing\": \"%s\",\n     \"hang\": ",
            atomic_load(&r->h.timing) == CGI_TIMING_EXACT ? "exact" : "sampled");
    const cgi_hang_page *pg = &r->hang;
    uint64_t reports = atomic_load(&pg->reports);
    uint32_t gen = atomic_load(&pg->gen);
    if (!reports || (gen & 1)) { /* none, or a process that died writing it */
        fputs("null", out);
        return;
    }
    fprintf(out,
            "{\"reports\": %" PRIu64 ", \"at_ns\": %" PRIu64 ", \"seen_ns\": %" PRIu64 ", \"hang_ms\": %" PRIu64
            ", \"asked\": %s, \"over\": %s, "
            "\"in_flight_count\": %u, \"calls\": [",
            reports, pg->at_ns, atomic_load(&pg->seen_ns), pg->hang_ns / 1000000u, pg->asked ? "true" : "false",
            pg->over ? "true" : "false", pg->in_flight > pg->ncalls ? pg->in_flight : pg->ncalls);
    uint32_t n = pg->ncalls < CGI_HANG_MAX_CALLS ? pg->ncalls : CGI_HANG_MAX_CALLS;
    for (uint32_t i = 0; i < n; i++) {
        const cgi_hang_call *e = &pg->call[i];
        fprintf(out, "%s\n       {\"api\": ", i ? "," : "");
        cgi_json_str(out, e->api);
        cgi_json_field_str(out, "name", e->name);
        fprintf(out, ", \"tid\": %d", e->tid);
        cgi_json_field_str(out, "thread", e->thread);
        fprintf(out, ", \"age_ns\": %" PRIu64, e->age_ns);
        cgi_json_hang_runtime(out, e);
        fprintf(out, ", \"waits_for_loader\": %s", e->loader ? "true" : "false");
        const char *lock = !e->waiting ? NULL : e->domain[0] ? e->domain : "(a handle lock)";
        cgi_json_field_str_or_null(out, "waits_for_lock", lock);
        fputs(", \"lock_held_by\": ", out);
        if (e->waiting && e->holder_tid)
            fprintf(out, "%d", e->holder_tid);
        else
            fputs("null", out);
        cgi_json_hang_args(out, e);
        fputs(",\n        \"python\": ", out);
        cgi_json_hang_python(out, e);
        int h;
        const char *quirk = cgi_behind_quirk(r->quirk, CGI_STATS_MAX_QUIRKS, pg->call, n, i, &h);
        cgi_json_behind(out, quirk ? &pg->call[h] : NULL, quirk);
        fputc('}', out);
    }
    fprintf(out, "%s],\n      \"waiting_for_runtime\": [", n ? "\n     " : "");
    uint32_t nw = pg->nwaiters < CGI_HANG_MAX_WAITERS ? pg->nwaiters : CGI_HANG_MAX_WAITERS;
    for (uint32_t i = 0; i < nw; i++) {
        fprintf(out, "%s{\"tid\": %d", i ? ", " : "", pg->waiter[i].tid);
        cgi_json_field_str(out, "thread", pg->waiter[i].thread);
        fputs(", \"runtime\": \"cpython\"}", out);
    }
    fputs("]}", out);
}

/* ---- calls in flight past the hang threshold that returned (docs/report.md) ------- */

static void cgi_json_late_calls(FILE *out, const cgi_stats_region *r)
{
    const cgi_late_call *v[CGI_LATE_MAX];
    size_t n = cgi_late_slowest_first(r, v);
    fputs(",\n     \"late_calls\": [", out);
    for (size_t i = 0; i < n; i++) {
        const cgi_hang_call *e = &v[i]->call;
        uint64_t ns = v[i]->ns;
        fprintf(out, "%s\n       {\"api\": ", i ? "," : "");
        cgi_json_str(out, e->api);
        cgi_json_field_str(out, "name", e->name);
        fprintf(out, ", \"duration_ms\": %" PRIu64 ", \"entered_ns\": %" PRIu64 ", \"tid\": %d",
                (ns + 500000u) / 1000000u, v[i]->ended_ns > ns ? v[i]->ended_ns - ns : 0, e->tid);
        cgi_json_field_str(out, "thread", e->thread);
        cgi_json_hang_runtime(out, e);
        cgi_json_hang_args(out, e);
        fputs(",\n        \"python\": ", out);
        cgi_json_hang_python(out, e);
        fputc('}', out);
    }
    fprintf(out, "%s],\n     \"late_calls_dropped\": %" PRIu64, n ? "\n     " : "", cgi_late_dropped(r, n));
}

/* ---- quirks matched, applied or not ------------------------------------------------ */

static void cgi_json_quirks(FILE *out, const cgi_stats_region *r)
{
    fputs(",\n     \"quirks\": [", out);
    size_t k = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++) {
        const cgi_quirk_rec *q = &r->quirk[i];
        if (!atomic_load(&q->valid)) continue;
        fprintf(out, "%s\n       {\"name\": ", k++ ? "," : "");
        cgi_json_str(out, q->name);
        cgi_json_field_str(out, "api", q->api);
        fprintf(out, ", \"applied\": %s", q->applied ? "true" : "false");
        if (!q->applied) cgi_json_field_str(out, "not_applied", q->not_applied);
        fputs(",\n        \"serialize\": [", out);
        const char *s = q->sites;
        for (int first = 1; *s; first = 0) {
            size_t len = strcspn(s, ",");
            char site[CGI_NAME_MAX];
            const char *a = s;
            while (*a == ' ')
                a++;
            size_t m = len - (size_t)(a - s);
            while (m && a[m - 1] == ' ')
                m--;
            snprintf(site, sizeof site, "%.*s", (int)m, a);
            fputs(first ? "" : ", ", out);
            cgi_json_str(out, site);
            s += len + (s[len] == ',');
        }
        fputc(']', out);
        cgi_json_field_str(out, "domain", q->domain);
        if (q->waiters[0]) cgi_json_field_str(out, "waits_behind", q->waiters);
        fputs(",\n        \"source\": ", out);
        cgi_json_str(out, q->source);
        cgi_json_field_str(out, "why", q->why);
        fprintf(out, ",\n        \"matched\": {\"vendor\": \"0x%04x\"", (unsigned)q->vendor);
        cgi_json_field_str(out, "driver", q->driver);
        cgi_json_field_str(out, "version", q->version);
        cgi_json_field_str(out, "library", q->library);
        fputs("}}", out);
    }
    fputs(k ? "\n     ]" : "]", out);
    fprintf(out, ",\n     \"quirks_dropped\": %" PRIu64 ", \"quirks_probed\": [", atomic_load(&r->h.quirks_dropped));
    /* The APIs whose drivers were checked against the quirks ("cl,ze"). */
    const char *api = r->h.quirks_probed, *end = api + strnlen(api, sizeof r->h.quirks_probed);
    for (int first = 1; api < end; first = 0) {
        size_t len = strcspn(api, ",");
        char one[CGI_API_NAME_MAX];
        snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), api);
        fputs(first ? "" : ", ", out);
        cgi_json_str(out, one);
        api += len + 1;
    }
    fputc(']', out);
}

/* ---- thread-rule violations (threads.c) -------------------------------------------- */

static const char *cgi_violation_kind(uint32_t kind) { return kind == CGI_VIOLATION_SEQUENCE ? "sequence" : "overlap"; }

static void cgi_json_violations(FILE *out, const cgi_stats_region *r)
{
    fprintf(out, ",\n     \"thread_violations\": [");
    size_t k = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_VIOLATIONS; i++) {
        const cgi_violation *v = &r->violation[i];
        if (!atomic_load(&v->valid)) continue;
        fprintf(out, "%s\n       {\"rule\": \"%s\", \"count\": %" PRIu64 ", \"handle\": \"0x%" PRIx64 "\"",
                k++ ? "," : "", cgi_violation_kind(v->kind), atomic_load(&v->count), v->handle);
        cgi_json_field_str(out, "api", v->api);
        cgi_json_field_str(out, "entry_point", v->name);
        cgi_json_field_str(out, "access", v->access);
        cgi_json_field_str(out, "param", v->param);
        fprintf(out, ", \"tid\": %d,\n        \"other_api\": ", v->tid);
        cgi_json_str(out, v->other_api);
        cgi_json_field_str(out, "other_entry_point", v->other);
        cgi_json_field_str(out, "other_access", v->other_access);
        cgi_json_field_str(out, "other_param", v->other_param);
        fprintf(out, ", \"other_tid\": %d", v->other_tid);
        if (v->set_name[0]) cgi_json_field_str(out, "set_entry_point", v->set_name);
        fputc('}', out);
    }
    fprintf(out, "%s],\n     \"thread_violations_dropped\": %" PRIu64 ", \"handles_untracked\": %" PRIu64,
            k ? "\n     " : "", atomic_load(&r->h.violations_dropped), atomic_load(&r->h.handles_untracked));
}

static void cgi_json_peaks(FILE *out, uint32_t inside, uint32_t waiting)
{
    if (inside)
        fprintf(out, ", \"peak_inside\": %u, \"peak_waiting\": %u, \"peak_kind\": \"exact\"", inside, waiting);
    else
        fputs(", \"peak_inside\": null, \"peak_waiting\": null, \"peak_kind\": \"not_measured\"", out);
}

/* The process's rank, local rank and the variable that named them (null: none). */
static void cgi_json_rank(FILE *out, const cgi_stats_header *h)
{
    if (h->rank_set & CGI_RANK_SET)
        fprintf(out, ", \"rank\": %u", h->rank);
    else
        fputs(", \"rank\": null", out);
    if (h->rank_set & CGI_LOCAL_RANK_SET)
        fprintf(out, ", \"local_rank\": %u", h->local_rank);
    else
        fputs(", \"local_rank\": null", out);
    const char *from = (h->rank_set & CGI_RANK_SET) && h->rank_from[0] ? h->rank_from : NULL;
    cgi_json_field_str_or_null(out, "rank_variable", from);
}

void cgi_json_begin(FILE *out) { fputs("{\n  " CGI_OUT_REPORT_SCHEMA ",\n  \"version\": 1,\n  \"processes\": [", out); }

static const char *const cgi_counter_keys[CGI_NCOUNTERS] = {
#define CGI_COUNTER_KEY(name, summed, sharded) #name,
    CGI_COUNTERS(CGI_COUNTER_KEY)
#undef CGI_COUNTER_KEY
};

/* The counters as JSON members, ", \"calls\": N, ...", in CGI_COUNTERS'
 * order: all of a site's; those a total adds up (`lead`: the first one
 * without its comma). */
static void cgi_json_counters(FILE *out, const cg_counters *c)
{
    for (unsigned k = 0; k < CGI_NCOUNTERS; k++)
        fprintf(out, ", \"%s\": %" PRIu64, cgi_counter_keys[k], cgi_counter(c, k));
}

static void cgi_json_totals(FILE *out, const cgi_totals *t, int lead)
{
#define CGI_TOTAL_JSON(name, summed, sharded)                                                                          \
    if (summed) fprintf(out, "%s\"%s\": %" PRIu64, lead ? "" : ", ", #name, t->name), lead = 0;
    CGI_COUNTERS(CGI_TOTAL_JSON)
#undef CGI_TOTAL_JSON
}

/* The entry points left uncounted and without a row (report.h): "uncounted". */
static void cgi_json_uncounted(FILE *out, const cgi_proc_view *p)
{
    size_t n = 0;
    for (uint32_t k = 0; k < cgi_nrec(p->region); k++) {
        if (!cgi_left_uncounted(p, k)) continue;
        fputs(n++ ? ", " : ",\n     \"uncounted\": [", out);
        cgi_json_str(out, p->region->r[k].name);
    }
    if (n) fputc(']', out);
}

/* One process (one with calls) of the "processes" array. */
void cgi_json_process(FILE *out, const cgi_proc_view *p, const cgi_totals *pt, size_t nproc)
{
    {
        const cgi_stats_region *r = p->region;
        cgi_totals t = *pt;
        int state, status;
        cgi_exit_of(p, &state, &status);
        fprintf(out, "%s\n    {\"pid\": %d, \"ppid\": %d", nproc ? "," : "", r->h.pid, r->h.ppid);
        cgi_json_field_str(out, "host", r->h.host);
        cgi_json_rank(out, &r->h);
        cgi_json_field_str(out, "command", r->h.command);
        fprintf(out, ",\n     \"exit\": {\"state\": \"%s\"", cgi_state_name(state));
        if (state == CGI_PROC_EXITED) fprintf(out, ", \"status\": %d", status);
        if (state == CGI_PROC_SIGNALED) fprintf(out, ", \"signal\": %d", status);
        /* Not reaped by callguard, with the fatal-signal hook on: what the
         * process itself noted (its exit, or the signal it died of). */
        if (!p->have_exit && atomic_load(&r->h.signal_hook)) fputs(", \"signal_hook\": true", out);
        fputs("},", out);
        if (p->have_trace)
            fprintf(out, "\n     \"trace\": {\"events\": %" PRIu64 ", \"dropped\": %" PRIu64 "},", p->trace_events,
                    p->trace_dropped);
        fprintf(out, "\n     \"sites\": [");
        size_t nsite = 0;
        for (uint32_t k = 0; k < cgi_nrec(r); k++) {
            const cgi_stats_record *rec = &r->r[k];
            const cg_counters *c = &rec->c;
            if (cgi_ctr_calls(c) == 0) continue;
            fprintf(out, "%s\n       {\"api\": ", nsite++ ? "," : "");
            cgi_json_str(out, rec->api);
            cgi_json_field_str(out, "name", rec->name);
            cgi_json_counters(out, c);
            fprintf(out, ",\n        \"policy\": {\"transition\": \"%s\", \"blocking\": %s",
                    cgi_transition_name(rec->transition), rec->blocking ? "true" : "false");
            cgi_json_field_str_or_null(out, "serialize", rec->domain[0] ? rec->domain : NULL);
            fprintf(out, ", \"scope\": \"%s\"", cgi_scope_name(rec->scope));
            if (rec->scope == CG_SCOPE_ONCE) {
                uint64_t at = cgi_ld(&rec->once_at);
                if (at) /* 0: before the process's first call (its parent opened it) */
                    fprintf(out, ", \"opened_at_call\": %" PRIu64, at == CGI_ONCE_BEFORE ? 0 : at);
                else
                    fputs(", \"opened_at_call\": null", out);
            }
            fprintf(out, "%s}", rec->collective ? ", \"collective\": true" : "");
            cgi_json_peaks(out, cgi_peak_of(&c->inside), cgi_peak_of(&c->waiting));
            cgi_code_list codes = {.n = 0};
            cgi_codes_add(&codes, rec, CGI_STATS_MAX_CODES);
            cgi_json_codes(out, &codes);
            fputc('}', out);
        }
        fprintf(out, "\n     ]");
        cgi_json_uncounted(out, p);
        cgi_json_stalls_and_in_flight(out, r);
        cgi_json_timing_and_hang(out, r);
        cgi_json_late_calls(out, r);
        cgi_json_violations(out, r);
        cgi_json_quirks(out, r);
        fputs(",\n     \"totals\": {", out);
        cgi_json_totals(out, &t, 1);
        fputs("}}", out);
    }
}

/* ---- across ranks (report_ranks.h) ---- */

typedef struct cgi_json_ranks_arg {
    FILE *out;
    const cgi_report_writer *w;
    size_t n;
} cgi_json_ranks_arg;

static void cgi_json_spread(FILE *out, const char *key, const cgi_rank_spread *s)
{
    fprintf(out, "\"%s\": {\"min\": %" PRIu64 ", \"median\": %" PRIu64 ", \"max\": %" PRIu64 ", \"max_rank\": %u", key,
            s->min, s->median, s->max, s->max_at.rank);
    cgi_json_field_str(out, "max_host", s->max_at.host);
    fputc('}', out);
}

/* {"threads": N, "rank": R, "host": H}, or null when not measured. */
static void cgi_json_peak_at(FILE *out, const char *key, uint32_t peak, const cgi_rank_where *at)
{
    fprintf(out, ", \"%s\": ", key);
    if (!peak) return (void)fputs("null", out);
    fprintf(out, "{\"threads\": %u, \"rank\": %u", peak, at->rank);
    cgi_json_field_str(out, "host", at->host);
    fputc('}', out);
}

static void cgi_json_rank_site(const cgi_rank_site *s, void *arg)
{
    cgi_json_ranks_arg *a = arg;
    FILE *out = a->out;
    const cgi_row *row = cgi_row_at(a->w, s->row);
    fprintf(out, "%s\n    {\"api\": ", a->n++ ? "," : "");
    cgi_json_str(out, row->api);
    cgi_json_field_str(out, "name", CGI_ROW_NAME(row));
    fprintf(out, ", \"ranks\": %u, \"calls\": %" PRIu64 ", \"total_ns\": %" PRIu64 ",\n     ", s->ranks, s->calls,
            s->total_ns);
    cgi_json_spread(out, "calls_per_rank", &s->calls_per_rank);
    fputs(",\n     ", out);
    cgi_json_spread(out, "ns_per_rank", &s->ns_per_rank);
    fputs("\n    ", out);
    cgi_json_peak_at(out, "peak_inside", s->peak_inside, &s->peak_inside_at);
    cgi_json_peak_at(out, "peak_waiting", s->peak_waiting, &s->peak_waiting_at);
    fputs(", \"worst_stall\": ", out);
    if (s->stall_ns) {
        fprintf(out, "{\"ns\": %" PRIu64 ", \"rank\": %u", s->stall_ns, s->stall_at.rank);
        cgi_json_field_str(out, "host", s->stall_at.host);
        fputc('}', out);
    } else
        fputs("null", out);
    if (row->collective) {
        /* A collective: every rank should have made it as often. */
        fputs(",\n     \"collective\": true, \"usual_calls\": ", out);
        if (s->no_usual)
            fputs("null", out);
        else
            fprintf(out, "%" PRIu64, s->usual_calls);
        fprintf(out, ", \"ranks_out_of_step\": %u, \"out_of_step\": [", s->nodd);
        for (uint32_t k = 0; k < s->nodd && k < CGI_RANKS_ODD_KEPT; k++) {
            fprintf(out, "%s{\"rank\": %u, \"calls\": %" PRIu64, k ? ", " : "", s->odd[k].rank, s->odd_calls[k]);
            cgi_json_field_str(out, "host", s->odd[k].host);
            fputc('}', out);
        }
        fputc(']', out);
    }
    fputc('}', out);
}

/* "across_ranks", when some process has a rank. */
static void cgi_json_across_ranks(FILE *out, const cgi_report_writer *w)
{
    size_t ranks, hosts, unranked;
    cgi_ranks_counts(w->ranks, &ranks, &hosts, &unranked);
    if (!ranks) return;
    fprintf(out,
            ",\n  \"across_ranks\": {\"ranks\": %zu, \"hosts\": %zu, \"processes_without_rank\": %zu, \"sites\": [",
            ranks, hosts, unranked);
    cgi_json_ranks_arg a = {out, w, 0};
    cgi_ranks_each(w->ranks, cgi_json_rank_site, &a);
    fputs(a.n ? "\n  ]}" : "]}", out);
}

/* One item of "advice" (docs/report.md). */
static void cgi_json_advice(const cgi_advice *a, void *arg)
{
    FILE *out = arg;
    const cgi_quirk_view *q = a->quirk;
    fprintf(out, "%s\n    {\"entry_point\": ", a->index ? "," : "");
    cgi_json_str(out, CGI_ROW_NAME(a->row));
    cgi_json_field_str(out, "api", a->row->api);
    fprintf(out, ", \"peak_inside\": %u, \"peak_waiting\": %u", a->row->peak_inside, a->row->peak_waiting);
    cgi_json_field_str(out, "quirk", q->name);
    fputs(",\n     \"affects\": {\"api\": ", out);
    cgi_json_str(out, q->api);
    fputs(", \"vendor\": [", out);
    for (unsigned k = 0; k < q->nvendors; k++)
        fprintf(out, "%s\"0x%04x\"", k ? ", " : "", (unsigned)q->vendor[k]);
    fputc(']', out);
    cgi_json_field_str_or_null(out, "driver", q->driver);
    cgi_json_field_str(out, "versions", q->versions);
    cgi_json_field_str_or_null(out, "library", q->library);
    fputs("},\n     \"why\": ", out);
    cgi_json_str(out, q->why);
    cgi_json_field_str(out, "source", q->source);
    fprintf(out, ", \"applied\": %s, \"affects_this_run\": %s", a->applied ? "true" : "false",
            a->affects == 1   ? "true"
            : a->affects == 0 ? "false"
                              : "null");
    char *fix = a->applied ? NULL : cgi_advice_fix(q);
    cgi_json_field_str_or_null(out, "fix", fix);
    free(fix);
    cgi_json_field_str_or_null(out, "advice", q->advice);
    fputc('}', out);
}

/* What the processes that ended inside calls were doing, grouped, groups
 * of one first (docs/report.md, "in_flight_groups"); only when some did. */
static void cgi_json_ended_groups(FILE *out, const cgi_report_writer *w)
{
    cgi_status_grouping gr = {0};
    if (!w->nended || cgi_status_grouped(w->ended, w->nended, &gr) != 0) return;
    const size_t *order = gr.order, ng = gr.ng;
    const cgi_status_group *groups = gr.groups;
    if (ng) fputs(",\n  \"in_flight_groups\": [", out);
    for (size_t g = 0; g < ng; g++) {
        const cgi_status_proc *p = &w->ended[order[groups[g].first]];
        fprintf(out, "%s\n    {\"ranks\": [", g ? "," : "");
        for (size_t i = 0, k = 0; i < groups[g].n; i++)
            if (w->ended[order[groups[g].first + i]].rank >= 0)
                fprintf(out, "%s%d", k++ ? ", " : "", (int)w->ended[order[groups[g].first + i]].rank);
        fputs("], \"pids\": [", out);
        for (size_t i = 0; i < groups[g].n; i++)
            fprintf(out, "%s%d", i ? ", " : "", w->ended[order[groups[g].first + i]].pid);
        fputs("], \"api\": ", out);
        cgi_json_str(out, p->call[0].api);
        cgi_json_field_str(out, "name", p->call[0].name);
        fprintf(out,
                ", \"waiting\": %s, \"oldest_ns\": %" PRIu64 ", \"python\": ", p->call[0].waiting ? "true" : "false",
                groups[g].oldest_ns);
        cgi_json_hang_python(out, &p->call[0]);
        fputc('}', out);
    }
    if (ng) fprintf(out, "],\n  \"in_flight_groups_dropped\": %zu", w->ended_more);
    cgi_status_grouping_free(&gr);
}

void cgi_json_end(FILE *out, size_t nproc, const cgi_totals *pall, size_t lost, const cgi_report_writer *w)
{
    const cgi_totals all = *pall;
    fprintf(out, "%s]", nproc ? "\n  " : "");
    if (lost) fprintf(out, ",\n  \"processes_without_statistics\": %zu", lost);
    const cgi_not_counted *nc = &w->not_counted;
    if (nc->processes) {
        fprintf(out, ",\n  \"not_counted\": {\"processes\": %" PRIu64 ", \"entry_points\": %" PRIu64 ", \"such_as\": [",
                nc->processes, nc->entry_points);
        for (size_t i = 0; i < nc->nnames; i++) {
            if (i) fputs(", ", out);
            cgi_json_str(out, nc->names[i]);
        }
        fputs("]}", out);
    }
    cgi_json_across_ranks(out, w);
    cgi_json_ended_groups(out, w);
    if (w->stuck) fprintf(out, ",\n  \"stuck\": %s", w->stuck);
    fputs(",\n  \"advice\": [", out);
    fputs(cgi_advice_each(w, cgi_json_advice, out) ? "\n  ]" : "]", out);
    fprintf(out, ",\n  \"totals\": {\"processes\": %zu", nproc);
    cgi_json_totals(out, &all, 0);
    fputs("}\n}\n", out);
}
