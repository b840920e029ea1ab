/* Reports: JSON for machines (schema in docs/report.md), a table for
 * people. Both are written from statistics regions, so one process's report
 * at exit and the CLI's merge of a whole process tree share this code. */
#define _GNU_SOURCE
#include "report.h"

#include "../runtime/errors.h"
#include "../runtime/names.h"
#include "outfile.h"
#include "pypackage.h"
#include "../runtime/trace_file.h"
#include "utf8.h"

#include "../policy/policy_ini.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void cgi_json_str(FILE *out, const char *s)
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
static void cgi_json_str_or_null(FILE *out, const char *s)
{
    if (s)
        cgi_json_str(out, s);
    else
        fputs("null", out);
}

/* A string of a process (its command line, a thread's name, a Python
 * file, a quirks file's text) in the table, at most max bytes: a control
 * character, a C1 control or a byte that is no UTF-8 becomes '?', as the
 * reader of saved reports makes it, so a table never prints terminal
 * control (docs/security.md). */
static void cgi_text_str(FILE *out, const char *s, size_t max)
{
    size_t left = strnlen(s, max);
    while (left) {
        size_t n = cgi_utf8_seq(s, left);
        unsigned char ch = (unsigned char)*s;
        int c1 = n == 2 && ch == 0xc2 && (unsigned char)s[1] < 0xa0;
        if (n > 1 && !c1)
            fwrite(s, 1, n, out);
        else
            fputc(n == 1 && ch >= 0x20 && ch != 0x7f ? ch : '?', out);
        if (!n || c1) n = 1;
        s += n, left -= n;
    }
}
#define CGI_TEXT_FIELD(out, field) cgi_text_str((out), (field), sizeof(field))

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
    uint64_t calls, nested, errors, total_ns, lock_wait_ns, stalls, stall_ns, states;
} cgi_totals;

static uint64_t cgi_ld(const _Atomic uint64_t *p) { return atomic_load_explicit(p, memory_order_relaxed); }

static void cgi_add(cgi_totals *t, const cg_counters *c)
{
    t->calls += cgi_ctr_calls(c);
    t->nested += cgi_ld(&c->nested);
    t->errors += cgi_ld(&c->errors);
    t->total_ns += cgi_ctr_total_ns(c);
    t->lock_wait_ns += cgi_ld(&c->lock_wait_ns);
    t->stalls += cgi_ld(&c->stalls);
    t->stall_ns += cgi_ld(&c->stall_ns);
    t->states += cgi_ld(&c->states);
}

static void cgi_sum(cgi_totals *all, const cgi_totals *t)
{
    all->calls += t->calls, all->nested += t->nested, all->errors += t->errors, all->total_ns += t->total_ns;
    all->lock_wait_ns += t->lock_wait_ns, all->stalls += t->stalls, all->stall_ns += t->stall_ns;
    all->states += t->states;
}

/* ---- result codes --------------------------------------------------------------
 * A site keeps its first CGI_STATS_MAX_CODES codes other than success by
 * name; the calls of the others are in errors and states, and counted here
 * as "other". A list merged over processes keeps up to CGI_CODES_MERGED. */

#define CGI_CODES_MERGED (2 * CGI_STATS_MAX_CODES)

typedef struct cgi_code_list {
    struct {
        char name[CGI_CODE_NAME_MAX];
        int32_t code;
        int state;
        uint64_t count;
    } v[CGI_CODES_MERGED];
    size_t n;
    uint64_t errors, states; /* of the site(s): what the named codes do not cover is "other" */
} cgi_code_list;

static void cgi_codes_add(cgi_code_list *l, const cgi_stats_record *rec, size_t cap)
{
    l->errors += cgi_ld(&rec->c.errors);
    l->states += cgi_ld(&rec->c.states);
    for (unsigned i = 0; i < CGI_STATS_MAX_CODES; i++) {
        const cgi_code *k = &rec->code[i];
        uint32_t set = atomic_load(&k->set);
        uint64_t n = cgi_ld(&k->count);
        if ((set != CGI_CODE_ERROR && set != CGI_CODE_STATE) || !n) continue;
        int state = set == CGI_CODE_STATE;
        size_t x = 0;
        while (x < l->n && !(l->v[x].code == k->code && l->v[x].state == state &&
                             strncmp(l->v[x].name, k->name, sizeof k->name) == 0))
            x++;
        if (x == l->n) {
            if (l->n == cap) continue; /* "other" */
            snprintf(l->v[x].name, sizeof l->v[x].name, "%.*s", (int)sizeof k->name - 1, k->name);
            l->v[x].code = k->code, l->v[x].state = state, l->v[x].count = 0;
            l->n++;
        }
        l->v[x].count += n;
    }
}

/* The calls of failures and of states that no named code covers. */
static void cgi_codes_other(const cgi_code_list *l, uint64_t *errors, uint64_t *states)
{
    uint64_t e = 0, st = 0;
    for (size_t x = 0; x < l->n; x++)
        *(l->v[x].state ? &st : &e) += l->v[x].count;
    *errors = l->errors > e ? l->errors - e : 0;
    *states = l->states > st ? l->states - st : 0;
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
        fprintf(out, ", \"code\": %d, \"calls\": %lu, \"kind\": \"%s\"}", (int)l->v[x].code,
                (unsigned long)l->v[x].count, l->v[x].state ? "state" : "error");
    }
    if (oe)
        fprintf(out, "%s{\"name\": \"other\", \"code\": null, \"calls\": %lu, \"kind\": \"error\"}", k++ ? ", " : "",
                (unsigned long)oe);
    if (os)
        fprintf(out, "%s{\"name\": \"other\", \"code\": null, \"calls\": %lu, \"kind\": \"state\"}", k++ ? ", " : "",
                (unsigned long)os);
    fputc(']', out);
}

/* "    results: ZE_RESULT_NOT_READY 999 (a state), ZE_RESULT_ERROR_DEVICE_LOST 1" under a row. */
static void cgi_text_codes(FILE *out, int indent, const cgi_code_list *l)
{
    uint64_t oe, os;
    cgi_codes_other(l, &oe, &os);
    if (!l->n && !oe && !os) return;
    fprintf(out, "%*sresults:", indent, "");
    size_t k = 0;
    for (size_t x = 0; x < l->n; x++, k++)
        fprintf(out, "%s %s %lu%s", k ? "," : "", l->v[x].name, (unsigned long)l->v[x].count,
                l->v[x].state ? " (a state)" : "");
    if (oe) fprintf(out, "%s other failures %lu", k++ ? "," : "", (unsigned long)oe);
    if (os) fprintf(out, "%s other states %lu", k++ ? "," : "", (unsigned long)os);
    fputc('\n', out);
}

static uint32_t cgi_nrec(const cgi_stats_region *r)
{
    uint32_t n = atomic_load(&r->h.nrecords);
    return n > CGI_STATS_MAX_RECORDS ? CGI_STATS_MAX_RECORDS : n;
}

static cgi_totals cgi_proc_totals(const cgi_stats_region *r)
{
    cgi_totals t = {0};
    for (uint32_t i = 0; i < cgi_nrec(r); i++)
        cgi_add(&t, &r->r[i].c);
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

/* ---- stalls and calls in flight ---------------------------------------------- */

static int cgi_by_worst(const void *a, const void *b)
{
    const cgi_stall *x = *(const cgi_stall *const *)a, *y = *(const cgi_stall *const *)b;
    return x->ns != y->ns ? (x->ns < y->ns ? 1 : -1) : (x->at_ns > y->at_ns) - (x->at_ns < y->at_ns);
}

/* The kept stalls, worst first, into v (CGI_STATS_MAX_STALLS long). */
static size_t cgi_stalls_worst_first(const cgi_stats_region *r, const cgi_stall **v)
{
    size_t n = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_STALLS; i++)
        if (atomic_load(&r->stall[i].valid)) v[n++] = &r->stall[i];
    qsort(v, n, sizeof *v, cgi_by_worst);
    return n;
}

static int cgi_in_flight(const cgi_slot *slot)
{
    return atomic_load(&slot->tid) > 0 && atomic_load(&slot->counters) != NULL;
}

static int cgi_waiting(const cgi_slot *slot) { return atomic_load(&slot->waiting) != 0; }

/* The record a slot's call counts into; NULL when it is not one of them.
 * The slot holds an address in the process that wrote it (h.base). */
static const cgi_stats_record *cgi_slot_record(const cgi_stats_region *r, const cgi_slot *slot)
{
    uint64_t off = (uint64_t)(uintptr_t)atomic_load(&slot->counters) - r->h.base;
    uint64_t first = offsetof(cgi_stats_region, r) + offsetof(cgi_stats_record, c);
    if (off < first || (off - first) % sizeof(cgi_stats_record)) return NULL;
    uint64_t k = (off - first) / sizeof(cgi_stats_record);
    return k < cgi_nrec(r) ? &r->r[k] : NULL;
}

static uint64_t cgi_entered_ns(const cgi_stats_region *r, const cgi_slot *slot)
{
    uint64_t t = atomic_load(&slot->entered);
    return t < r->h.tick0 ? 0 : (uint64_t)(((unsigned __int128)(t - r->h.tick0) * atomic_load(&r->h.tick_mult)) >> 32);
}

static const char *cgi_slot_state_name(const cgi_slot *slot)
{
    return cgi_waiting(slot) ? "waiting_for_lock" : "inside";
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
        fprintf(out, ", \"name\": ");
        cgi_json_str(out, st->name);
        fprintf(
            out,
            ", \"ns\": %lu, \"call_ns\": %lu, \"lock_wait_ns\": %lu, \"entered_ns\": %lu, \"tid\": %d, \"thread\": ",
            (unsigned long)st->ns, (unsigned long)st->call_ns, (unsigned long)st->wait_ns, (unsigned long)st->at_ns,
            st->tid);
        cgi_json_str(out, st->thread);
        fprintf(out, ", \"runtime\": ");
        cgi_json_str(out, st->runtime);
        fprintf(out, ",\n        \"python\": ");
        if (st->py_file[0] || st->py_func[0]) {
            fprintf(out, "{\"file\": ");
            cgi_json_str(out, st->py_file);
            fprintf(out, ", \"line\": %d, \"function\": ", st->py_line);
            cgi_json_str(out, st->py_func);
            cgi_py_pkg pkg;
            if (cgi_py_package(st->py_file, &pkg)) {
                fputs(", \"package\": ", out);
                cgi_json_str(out, pkg.package);
                fputs(", \"distribution\": ", out);
                cgi_json_str_or_null(out, pkg.distribution[0] ? pkg.distribution : NULL);
                fputs(", \"version\": ", out);
                cgi_json_str_or_null(out, pkg.version[0] ? pkg.version : NULL);
            }
            fputc('}', out);
        } else {
            fputs("null", out);
        }
        fputc('}', out);
    }
    fprintf(out, "%s],\n     \"stalls_dropped\": %lu,\n     \"in_flight\": [", n ? "\n     " : "",
            (unsigned long)atomic_load(&r->h.stalls_dropped));
    size_t k = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        const cgi_slot *slot = &r->slot[i];
        if (!cgi_in_flight(slot)) continue;
        const cgi_stats_record *rec = cgi_slot_record(r, slot);
        fprintf(out, "%s\n       {\"api\": ", k++ ? "," : "");
        cgi_json_str(out, rec ? rec->api : "?");
        fprintf(out, ", \"name\": ");
        cgi_json_str(out, rec ? rec->name : "?");
        fprintf(out, ", \"tid\": %d, \"thread\": ", atomic_load(&slot->tid));
        char name[sizeof slot->thread + 1];
        snprintf(name, sizeof name, "%.*s", (int)sizeof slot->thread, slot->thread);
        cgi_json_str(out, name);
        fprintf(out, ", \"state\": \"%s\", \"entered_ns\": %lu}", cgi_slot_state_name(slot),
                (unsigned long)cgi_entered_ns(r, slot));
    }
    fprintf(out, "%s],\n     \"in_flight_unknown_threads\": %u", k ? "\n     " : "",
            (unsigned)atomic_load(&r->h.threads_unslotted));
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
        fputs(", \"api\": ", out);
        cgi_json_str(out, q->api);
        fprintf(out, ", \"applied\": %s", q->applied ? "true" : "false");
        if (!q->applied) {
            fputs(", \"not_applied\": ", out);
            cgi_json_str(out, q->not_applied);
        }
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
        fputs("], \"domain\": ", out);
        cgi_json_str(out, q->domain);
        fputs(",\n        \"source\": ", out);
        cgi_json_str(out, q->source);
        fputs(", \"why\": ", out);
        cgi_json_str(out, q->why);
        fprintf(out, ",\n        \"matched\": {\"vendor\": \"0x%04x\", \"driver\": ", (unsigned)q->vendor);
        cgi_json_str(out, q->driver);
        fputs(", \"version\": ", out);
        cgi_json_str(out, q->version);
        fputs(", \"library\": ", out);
        cgi_json_str(out, q->library);
        fputs("}}", out);
    }
    fputs(k ? "\n     ]" : "]", out);
    fprintf(out, ",\n     \"quirks_dropped\": %lu", (unsigned long)atomic_load(&r->h.quirks_dropped));
}

/* One line per quirk matched: what it serialized (or why it did not), the
 * driver it matched, its source; then how many more were not kept. */
static void cgi_text_quirks(FILE *out, const cgi_stats_region *r)
{
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++) {
        const cgi_quirk_rec *q = &r->quirk[i];
        if (!atomic_load(&q->valid)) continue;
        fputs("  quirk ", out);
        CGI_TEXT_FIELD(out, q->name);
        if (q->applied) {
            fputs(" applied: ", out);
            CGI_TEXT_FIELD(out, q->sites);
            fputs(" serialized in domain ", out);
            CGI_TEXT_FIELD(out, q->domain);
        } else {
            fputs(" NOT applied: ", out);
            CGI_TEXT_FIELD(out, q->not_applied);
        }
        fprintf(out, "; matched %s driver '", q->api);
        CGI_TEXT_FIELD(out, q->driver);
        fprintf(out, "' vendor 0x%04x version ", (unsigned)q->vendor);
        CGI_TEXT_FIELD(out, q->version);
        fputs(q->library[0] ? "; " : "", out);
        CGI_TEXT_FIELD(out, q->library);
        fputs("\n    ", out);
        CGI_TEXT_FIELD(out, q->why);
        fputs(" (", out);
        CGI_TEXT_FIELD(out, q->source);
        fputs(")\n", out);
    }
    uint64_t dropped = atomic_load(&r->h.quirks_dropped);
    if (dropped)
        fprintf(out, "  %lu more quirk%s matched, not kept here (a process keeps %d)\n", (unsigned long)dropped,
                dropped == 1 ? "" : "s", CGI_STATS_MAX_QUIRKS);
}

/* ---- thread-rule violations (threads.c) -------------------------------------------- */

static const char *cgi_violation_kind(uint32_t kind) { return kind == CGI_VIOLATION_SEQUENCE ? "sequence" : "overlap"; }

static uint64_t cgi_violations_total(const cgi_stats_region *r)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_VIOLATIONS; i++)
        if (atomic_load(&r->violation[i].valid)) n += atomic_load(&r->violation[i].count);
    return n;
}

static void cgi_json_violations(FILE *out, const cgi_stats_region *r)
{
    fprintf(out, ",\n     \"thread_violations\": [");
    size_t k = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_VIOLATIONS; i++) {
        const cgi_violation *v = &r->violation[i];
        if (!atomic_load(&v->valid)) continue;
        fprintf(out, "%s\n       {\"rule\": \"%s\", \"count\": %lu, \"handle\": \"0x%lx\", \"api\": ", k++ ? "," : "",
                cgi_violation_kind(v->kind), (unsigned long)atomic_load(&v->count), (unsigned long)v->handle);
        cgi_json_str(out, v->api);
        fputs(", \"entry_point\": ", out);
        cgi_json_str(out, v->name);
        fputs(", \"access\": ", out);
        cgi_json_str(out, v->access);
        fputs(", \"param\": ", out);
        cgi_json_str(out, v->param);
        fprintf(out, ", \"tid\": %d,\n        \"other_api\": ", v->tid);
        cgi_json_str(out, v->other_api);
        fputs(", \"other_entry_point\": ", out);
        cgi_json_str(out, v->other);
        fputs(", \"other_access\": ", out);
        cgi_json_str(out, v->other_access);
        fputs(", \"other_param\": ", out);
        cgi_json_str(out, v->other_param);
        fprintf(out, ", \"other_tid\": %d", v->other_tid);
        if (v->set_name[0]) {
            fputs(", \"set_entry_point\": ", out);
            cgi_json_str(out, v->set_name);
        }
        fputc('}', out);
    }
    fprintf(out, "%s],\n     \"thread_violations_dropped\": %lu, \"handles_untracked\": %lu", k ? "\n     " : "",
            (unsigned long)atomic_load(&r->h.violations_dropped), (unsigned long)atomic_load(&r->h.handles_untracked));
}

/* First in a process's table: what the program did wrong comes before how long it took. */
static void cgi_text_violations(FILE *out, const cgi_stats_region *r)
{
    uint64_t total = cgi_violations_total(r), dropped = atomic_load(&r->h.violations_dropped);
    uint64_t untracked = atomic_load(&r->h.handles_untracked);
    if (!total && !dropped && !untracked) return;
    fprintf(out,
            "  %lu thread-rule violation%s: calls the API's rules forbid to overlap on one handle "
            "(docs/threads.md)\n",
            (unsigned long)(total + dropped), total + dropped == 1 ? "" : "s");
    for (unsigned i = 0; i < CGI_STATS_MAX_VIOLATIONS; i++) {
        const cgi_violation *v = &r->violation[i];
        if (!atomic_load(&v->valid)) continue;
        unsigned long c = (unsigned long)atomic_load(&v->count);
        if (v->kind == CGI_VIOLATION_SEQUENCE)
            fprintf(out,
                    "    sequence: %s %s %s %s (thread %d) after its own %s, and %s %s %s (thread %d) set it in "
                    "between; handle 0x%lx, %lu time%s\n",
                    v->api, v->name, v->access, v->param, v->tid, v->set_name[0] ? v->set_name : "setting", v->other,
                    v->other_access, v->other_param, v->other_tid, (unsigned long)v->handle, c, c == 1 ? "" : "s");
        else
            fprintf(out,
                    "    overlap: %s %s %s %s (thread %d) while %s %s %s (thread %d) was inside; handle 0x%lx, "
                    "%lu time%s\n",
                    v->api, v->name, v->access, v->param, v->tid, v->other, v->other_access, v->other_param,
                    v->other_tid, (unsigned long)v->handle, c, c == 1 ? "" : "s");
    }
    if (dropped)
        fprintf(out, "    %lu more of kinds not kept (a process keeps %d kinds)\n", (unsigned long)dropped,
                CGI_STATS_MAX_VIOLATIONS);
    if (untracked)
        fprintf(out, "    %lu checked calls were not checked: the checker's table of handles was full\n",
                (unsigned long)untracked);
}

/* A site's peaks: measured (exact) when its calls counted them, which a
 * blocking or serialized site's do (call.c); a call counted there makes
 * peak_inside at least 1, so 0 means not measured. */
static uint32_t cgi_peak_of(const cgi_peak *p) { return atomic_load_explicit(&p->peak, memory_order_relaxed); }

static void cgi_json_peaks(FILE *out, uint32_t inside, uint32_t waiting)
{
    if (inside)
        fprintf(out, ", \"peak_inside\": %u, \"peak_waiting\": %u, \"peak_kind\": \"exact\"", inside, waiting);
    else
        fputs(", \"peak_inside\": null, \"peak_waiting\": null, \"peak_kind\": \"not_measured\"", out);
}

/* The table's column: "8/3" (inside/waiting), "-" when not measured. */
static const char *cgi_text_peaks(char *buf, size_t cap, uint32_t inside, uint32_t waiting)
{
    if (!inside) return "-";
    snprintf(buf, cap, "%u/%u", inside, waiting);
    return buf;
}

static void cgi_json_begin(FILE *out)
{
    fputs("{\n  " CGI_OUT_REPORT_SCHEMA ",\n  \"version\": 1,\n  \"processes\": [", out);
}

/* One process (one with calls) of the "processes" array. */
static void cgi_json_process(FILE *out, const cgi_proc_view *p, const cgi_totals *pt, size_t nproc)
{
    {
        const cgi_stats_region *r = p->region;
        cgi_totals t = *pt;
        int state, status;
        cgi_exit_of(p, &state, &status);
        fprintf(out, "%s\n    {\"pid\": %d, \"ppid\": %d, \"host\": ", nproc ? "," : "", r->h.pid, r->h.ppid);
        cgi_json_str(out, r->h.host);
        fputs(", \"command\": ", out);
        cgi_json_str(out, r->h.command);
        fprintf(out, ",\n     \"exit\": {\"state\": \"%s\"", cgi_state_name(state));
        if (state == CGI_PROC_EXITED) fprintf(out, ", \"status\": %d", status);
        if (state == CGI_PROC_SIGNALED) fprintf(out, ", \"signal\": %d", status);
        /* Not reaped by callguard, with the fatal-signal hook on: what the
         * process itself noted (its exit, or the signal it died of). */
        if (!p->have_exit && atomic_load(&r->h.signal_hook)) fputs(", \"signal_hook\": true", out);
        fputs("},", out);
        if (p->have_trace)
            fprintf(out, "\n     \"trace\": {\"events\": %lu, \"dropped\": %lu},", (unsigned long)p->trace_events,
                    (unsigned long)p->trace_dropped);
        fprintf(out, "\n     \"sites\": [");
        size_t nsite = 0;
        for (uint32_t k = 0; k < cgi_nrec(r); k++) {
            const cgi_stats_record *rec = &r->r[k];
            const cg_counters *c = &rec->c;
            if (cgi_ctr_calls(c) == 0) continue;
            fprintf(out, "%s\n       {\"api\": ", nsite++ ? "," : "");
            cgi_json_str(out, rec->api);
            fprintf(out, ", \"name\": ");
            cgi_json_str(out, rec->name);
            fprintf(out,
                    ", \"calls\": %lu, \"nested\": %lu, \"errors\": %lu, \"total_ns\": %lu, \"max_ns\": %lu, "
                    "\"lock_wait_ns\": %lu, \"stalls\": %lu, \"stall_ns\": %lu,\n        \"policy\": {\"transition\": "
                    "\"%s\", \"blocking\": %s, \"serialize\": ",
                    (unsigned long)cgi_ctr_calls(c), (unsigned long)cgi_ld(&c->nested),
                    (unsigned long)cgi_ld(&c->errors), (unsigned long)cgi_ctr_total_ns(c),
                    (unsigned long)cgi_ld(&c->max_ns), (unsigned long)cgi_ld(&c->lock_wait_ns),
                    (unsigned long)cgi_ld(&c->stalls), (unsigned long)cgi_ld(&c->stall_ns),
                    cgi_transition_name(rec->transition), rec->blocking ? "true" : "false");
            cgi_json_str_or_null(out, rec->domain[0] ? rec->domain : NULL);
            fprintf(out, ", \"scope\": \"%s\"}", cgi_scope_name(rec->scope));
            fprintf(out, ",\n        \"states\": %lu", (unsigned long)cgi_ld(&c->states));
            cgi_json_peaks(out, cgi_peak_of(&c->inside), cgi_peak_of(&c->waiting));
            cgi_code_list codes = {.n = 0};
            cgi_codes_add(&codes, rec, CGI_STATS_MAX_CODES);
            cgi_json_codes(out, &codes);
            fputc('}', out);
        }
        fprintf(out, "\n     ]");
        cgi_json_stalls_and_in_flight(out, r);
        cgi_json_violations(out, r);
        cgi_json_quirks(out, r);
        fprintf(out,
                ",\n     \"totals\": {\"calls\": %lu, \"nested\": %lu, \"errors\": %lu, \"states\": %lu, "
                "\"total_ns\": %lu, \"lock_wait_ns\": %lu, \"stalls\": %lu, \"stall_ns\": %lu}}",
                (unsigned long)t.calls, (unsigned long)t.nested, (unsigned long)t.errors, (unsigned long)t.states,
                (unsigned long)t.total_ns, (unsigned long)t.lock_wait_ns, (unsigned long)t.stalls,
                (unsigned long)t.stall_ns);
    }
}

/* The advice after the processes (below: it reads the combined table). */
static void cgi_advice_all(FILE *out, const cgi_report_writer *w);

static void cgi_json_end(FILE *out, size_t nproc, const cgi_totals *pall, size_t lost, const cgi_report_writer *w)
{
    const cgi_totals all = *pall;
    fprintf(out, "%s]", nproc ? "\n  " : "");
    if (lost) fprintf(out, ",\n  \"processes_without_statistics\": %zu", lost);
    cgi_advice_all(out, w);
    fprintf(out,
            ",\n  \"totals\": {\"processes\": %zu, \"calls\": %lu, \"nested\": %lu, \"errors\": %lu, \"states\": %lu, "
            "\"total_ns\": %lu, \"lock_wait_ns\": %lu, \"stalls\": %lu, \"stall_ns\": %lu}\n}\n",
            nproc, (unsigned long)all.calls, (unsigned long)all.nested, (unsigned long)all.errors,
            (unsigned long)all.states, (unsigned long)all.total_ns, (unsigned long)all.lock_wait_ns,
            (unsigned long)all.stalls, (unsigned long)all.stall_ns);
}

static double cgi_ms(uint64_t ns) { return (double)ns / 1e6; }

/* "SIGABRT" (or "signal 77" for one without a name). Our own table, not
 * sigabbrev_np (glibc 2.32): the package is built for glibc 2.17. */
static void cgi_signal_name(int sig, char *out, size_t cap)
{
    static const char *const names[] = {
        [SIGHUP] = "HUP",       [SIGINT] = "INT",     [SIGQUIT] = "QUIT", [SIGILL] = "ILL",   [SIGTRAP] = "TRAP",
        [SIGABRT] = "ABRT",     [SIGBUS] = "BUS",     [SIGFPE] = "FPE",   [SIGKILL] = "KILL", [SIGUSR1] = "USR1",
        [SIGSEGV] = "SEGV",     [SIGUSR2] = "USR2",   [SIGPIPE] = "PIPE", [SIGALRM] = "ALRM", [SIGTERM] = "TERM",
        [SIGCHLD] = "CHLD",     [SIGCONT] = "CONT",   [SIGSTOP] = "STOP", [SIGTSTP] = "TSTP", [SIGTTIN] = "TTIN",
        [SIGTTOU] = "TTOU",     [SIGURG] = "URG",     [SIGXCPU] = "XCPU", [SIGXFSZ] = "XFSZ", [SIGVTALRM] = "VTALRM",
        [SIGPROF] = "PROF",     [SIGWINCH] = "WINCH", [SIGIO] = "IO",     [SIGPWR] = "PWR",   [SIGSYS] = "SYS",
#ifdef SIGSTKFLT
        [SIGSTKFLT] = "STKFLT",
#endif
    };
    if (sig > 0 && (size_t)sig < sizeof names / sizeof names[0] && names[sig])
        snprintf(out, cap, "SIG%s", names[sig]);
    else
        snprintf(out, cap, "signal %d", sig);
}

/* One line saying how the process ended and which calls it ended inside,
 * then one line per thread. */
static void cgi_text_in_flight(FILE *out, const cgi_stats_region *r, int state, int status)
{
    const cgi_stats_record *recs[CGI_STATS_MAX_SLOTS];
    int waiting[CGI_STATS_MAX_SLOTS], count[CGI_STATS_MAX_SLOTS];
    size_t ngroups = 0, nthreads = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        const cgi_slot *slot = &r->slot[i];
        if (!cgi_in_flight(slot)) continue;
        const cgi_stats_record *rec = cgi_slot_record(r, slot);
        int w = cgi_waiting(slot);
        size_t g = 0;
        while (g < ngroups && !(recs[g] == rec && waiting[g] == w))
            g++;
        if (g == ngroups) recs[g] = rec, waiting[g] = w, count[g] = 0, ngroups++;
        count[g]++, nthreads++;
    }
    unsigned unknown = atomic_load(&r->h.threads_unslotted);
    if (!nthreads && !unknown) return;
    char how[160], sig[32];
    if (state == CGI_PROC_SIGNALED)
        cgi_signal_name(status, sig, sizeof sig), snprintf(how, sizeof how, "died of %s", sig);
    else if (state == CGI_PROC_EXITED)
        snprintf(how, sizeof how, "exited with status %d", status);
    else if (state == CGI_PROC_EXECED)
        snprintf(how, sizeof how, "was replaced by exec");
    else if (atomic_load(&r->h.signal_hook))
        snprintf(how, sizeof how,
                 "ended without exit handlers and without a fatal signal the signal hook saw "
                 "(SIGKILL, another uncatchable end, or _exit)");
    else
        snprintf(how, sizeof how,
                 "ended without exit handlers (how is not known: callguard did not reap it; "
                 "--signals record would note a fatal signal)");
    if (nthreads) {
        fprintf(out, "  %s with", how);
        for (size_t g = 0; g < ngroups; g++)
            fprintf(out, "%s %d thread%s %s %s", g ? (g + 1 == ngroups ? " and" : ",") : "", count[g],
                    count[g] == 1 ? "" : "s", waiting[g] ? "waiting for the lock of" : "inside",
                    recs[g] ? recs[g]->name : "an unknown entry point");
        fputc('\n', out);
        for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
            const cgi_slot *slot = &r->slot[i];
            if (!cgi_in_flight(slot)) continue;
            const cgi_stats_record *rec = cgi_slot_record(r, slot);
            /* "called": when it entered callguard; a call that waited for
             * its lock went into the driver later (the slot keeps one time). */
            fprintf(out, "    thread %d \"", atomic_load(&slot->tid));
            CGI_TEXT_FIELD(out, slot->thread);
            fprintf(out, "\" %s %s %s, called %.3f ms after start\n",
                    cgi_waiting(slot) ? "waiting for the lock of" : "inside", rec ? rec->api : "?",
                    rec ? rec->name : "?", cgi_ms(cgi_entered_ns(r, slot)));
        }
    }
    if (unknown)
        fprintf(out,
                "  %u thread%s found no free slot (%d at most): whether %s inside a call at the end is not known\n",
                unknown, unknown == 1 ? "" : "s", CGI_STATS_MAX_SLOTS, unknown == 1 ? "it was" : "they were");
}

/* What to do about stalls, once per runtime they held: --release-gil and
 * ctypes are CPython's; Julia's calls are made GC-safe by the package or by
 * callguard run; another runtime is left by its binding, through its
 * adapter (docs/adapters.md). No stall listed: the CPython advice, the
 * runtime callguard itself detects. */
/* A stall made from a Python package's code: the package (and its
 * distribution, where its dist-info says) to report it to, once per
 * package, from its worst stall. */
static void cgi_text_packages(FILE *out, const cgi_stall *const *v, size_t n)
{
    char said[CGI_STATS_MAX_STALLS][64];
    size_t nsaid = 0;
    for (size_t i = 0; i < n; i++) {
        cgi_py_pkg pkg;
        if (!v[i]->py_file[0] || !cgi_py_package(v[i]->py_file, &pkg)) continue;
        size_t k = 0;
        while (k < nsaid && strcmp(said[k], pkg.package) != 0)
            k++;
        if (k < nsaid) continue;
        memcpy(said[nsaid++], pkg.package, sizeof said[0]);
        fputs("  held by ", out);
        CGI_TEXT_FIELD(out, pkg.package);
        if (pkg.distribution[0]) {
            fputs(" (distribution ", out);
            CGI_TEXT_FIELD(out, pkg.distribution);
            fputs(pkg.version[0] ? " " : "", out);
            CGI_TEXT_FIELD(out, pkg.version);
            fputc(')', out);
        }
        fputs(": ", out);
        CGI_TEXT_FIELD(out, v[i]->py_func);
        fprintf(out, "() held %s through %s for %.3f ms (",
                strcmp(v[i]->runtime, "cpython") == 0 ? "the GIL" : "its runtime", v[i]->name, cgi_ms(v[i]->ns));
        CGI_TEXT_FIELD(out, v[i]->py_file);
        fprintf(out, ":%d): report it to the package's maintainers\n", v[i]->py_line);
    }
}

static void cgi_text_advice(FILE *out, const cgi_stall *const *v, size_t n)
{
    int cpython = n == 0;
    cgi_text_packages(out, v, n);
    for (size_t i = 0; i < n; i++) {
        const char *rt = v[i]->runtime;
        if (!rt[0] || strcmp(rt, "cpython") == 0) {
            cpython = 1;
            continue;
        }
        size_t k = 0;
        while (k < i && strcmp(v[k]->runtime, rt) != 0)
            k++;
        if (k < i) continue; /* said already */
        if (strcmp(rt, "julia") == 0) {
            /* Julia's binding is the package's ccall: made GC-safe there,
             * or by callguard from outside, for every package at once. */
            fputs("  what to do (julia): make these calls GC-safe in the package: @ccall gc_safe=true (Julia 1.12 "
                  "and later), GPUToolbox's @gcsafe_ccall before; or run it under callguard run --release-runtime\n",
                  out);
            continue;
        }
        int known = strcmp(rt, "ruby") == 0 || strcmp(rt, "ocaml") == 0;
        fprintf(out, "  what to do (%s): leave the runtime around these calls in the binding: its adapter, ", rt);
        if (known)
            fprintf(out, "cg_set_adapter(cg_adapter_%s(), CG_ADAPTER_ACTIVE)", rt);
        else
            fprintf(out, "the %s adapter set CG_ADAPTER_ACTIVE", rt);
        fputs(" (docs/adapters.md), or the runtime's own way to release it around a blocking call\n", out);
    }
    if (cpython)
        fprintf(out,
                "  what to do: release the runtime around these calls in the binding (Py_BEGIN_ALLOW_THREADS in a C "
                "extension, ctypes.CDLL rather than ctypes.PyDLL), or run it under callguard run --release-gil\n");
}

/* The stalls, worst first, and what to do about them. */
static void cgi_text_stalls(FILE *out, const cgi_stats_region *r, uint64_t stalls)
{
    const cgi_stall *v[CGI_STATS_MAX_STALLS];
    size_t n = cgi_stalls_worst_first(r, v);
    if (!stalls && !n) return;
    uint64_t dropped = atomic_load(&r->h.stalls_dropped);
    fprintf(out, "  %lu stall%s: calls that held the runtime while they waited (worst first", (unsigned long)stalls,
            stalls == 1 ? "" : "s");
    if (dropped) fprintf(out, "; the worst %d kept, %lu more not listed", CGI_STATS_MAX_STALLS, (unsigned long)dropped);
    fprintf(out, "):\n");
    for (size_t i = 0; i < n; i++) {
        const cgi_stall *st = v[i];
        fprintf(out, "    %10.3f ms  %s %s  thread %d \"", cgi_ms(st->ns), st->api, st->name, st->tid);
        CGI_TEXT_FIELD(out, st->thread);
        fputs("\"  holding ", out);
        CGI_TEXT_FIELD(out, st->runtime);
        if (st->wait_ns) fprintf(out, " (%.3f ms of it waiting for the lock)", cgi_ms(st->wait_ns));
        if (st->py_file[0]) {
            fputs("  at ", out);
            CGI_TEXT_FIELD(out, st->py_file);
            fprintf(out, ":%d in ", st->py_line);
            CGI_TEXT_FIELD(out, st->py_func);
            fputs("()", out);
        }
        fputc('\n', out);
    }
    cgi_text_advice(out, v, n);
}

/* ---- a report, one process at a time ------------------------------------------
 * A report is written while its processes are read: each process is written,
 * and folded into the totals and the combined table, when it is added, and
 * nothing of it is kept after. What grows is the combined table: one row per
 * entry point (its names and counts) and one entry per host name. */

/* One entry point of the combined table: its counts over all processes.
 * 96 bytes and its names: the bound docs/report.md states counts on it. */
typedef struct cgi_row {
    const char *api;            /* "api\0name\0domain\0" in the arena */
    uint8_t name_at, domain_at; /* where name and domain start in it */
    uint8_t transition, scope, blocking;
    uint8_t mixed; /* the processes ran it with different policies */
    cgi_totals t;
    uint64_t max_ns;
    uint32_t peak_inside, peak_waiting; /* the most over the processes (0: not measured in any) */
    cgi_code_list *codes; /* its result codes other than success, by name; NULL while none (in the arena) */
} cgi_row;
#define CGI_ROW_NAME(row) ((row)->api + (row)->name_at)
#define CGI_ROW_DOMAIN(row) ((row)->api + (row)->domain_at)
/* Rows of the combined table that name their result codes (about 540 bytes
 * each); later rows with codes other than success show only their counts. */
#define CGI_ROWS_WITH_CODES 4096
/* Rows are kept in blocks that never move: no copy of them all to grow. */
#define CGI_ROW_BLOCK 4096

/* The rows' strings and the host names, copied into large blocks. */
typedef struct cgi_arena_block {
    struct cgi_arena_block *next;
    size_t used;
    char bytes[];
} cgi_arena_block;
#define CGI_ARENA_BLOCK ((size_t)64 << 10)

/* An open-addressing index of an array: an entry's index + 1, 0 empty. */
typedef struct cgi_index {
    uint32_t *ix;
    size_t cap; /* a power of two, at least twice the entries */
} cgi_index;

struct cgi_report_writer {
    cgi_outfile o;
    char *path;
    cg_report_format format;
    size_t nproc;
    cgi_totals all;
    cgi_row **rowblk; /* first-seen order, CGI_ROW_BLOCK a block */
    size_t nrow, nblk, blkcap;
    cgi_index rowix;
    const char **hosts;
    size_t nhosts, hostcap;
    cgi_index hostix;
    int apiw;
    int oom;
    const char **applied; /* the quirks some process applied, by name (advice) */
    size_t napplied, appliedcap;
    size_t ncodelists; /* rows with a list of result codes */
    cgi_arena_block *arena;
};

/* Room for len bytes in the arena; NULL: out of memory. */
static char *cgi_arena_take(cgi_report_writer *w, size_t len)
{
    cgi_arena_block *b = w->arena;
    if (!b || b->used + len > CGI_ARENA_BLOCK) {
        b = malloc(sizeof *b + CGI_ARENA_BLOCK);
        if (!b) return NULL;
        b->next = w->arena, b->used = 0, w->arena = b;
    }
    char *out = b->bytes + b->used;
    b->used += len;
    return out;
}

static const char *cgi_arena_str(cgi_report_writer *w, const char *s, size_t cap)
{
    size_t len = strnlen(s, cap);
    char *out = cgi_arena_take(w, len + 1);
    if (out) memcpy(out, s, len), out[len] = '\0';
    return out;
}

static cgi_row *cgi_row_at(const cgi_report_writer *w, size_t i)
{
    return &w->rowblk[i / CGI_ROW_BLOCK][i % CGI_ROW_BLOCK];
}

/* FNV-1a of a, then b (NULL: none); each at most its field's size. */
static uint64_t cgi_hash(const char *a, size_t acap, const char *b, size_t bcap)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < acap && a[i]; i++)
        h = (h ^ (unsigned char)a[i]) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (size_t i = 0; b && i < bcap && b[i]; i++)
        h = (h ^ (unsigned char)b[i]) * 1099511628211ull;
    return h;
}

static uint64_t cgi_row_hash(const cgi_report_writer *w, size_t i)
{
    const cgi_row *row = cgi_row_at(w, i);
    return cgi_hash(row->api, CGI_API_NAME_MAX, CGI_ROW_NAME(row), CGI_NAME_MAX);
}

static uint64_t cgi_host_hash(const cgi_report_writer *w, size_t i) { return cgi_hash(w->hosts[i], 64, NULL, 0); }

/* Room for entry n (the index stays at most half full); 0: out of memory. */
static int cgi_index_room(cgi_index *x, size_t n, const cgi_report_writer *w,
                          uint64_t (*hash_of)(const cgi_report_writer *, size_t))
{
    if (n >= UINT32_MAX - 1) return 0;
    if ((n + 1) * 2 <= x->cap) return 1;
    size_t cap = x->cap ? x->cap * 2 : 1024;
    uint32_t *ix = calloc(cap, sizeof *ix);
    if (!ix) return 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = hash_of(w, i) & (cap - 1);
        while (ix[k])
            k = (k + 1) & (cap - 1);
        ix[k] = (uint32_t)i + 1;
    }
    free(x->ix);
    x->ix = ix, x->cap = cap;
    return 1;
}

static void cgi_index_put(cgi_index *x, uint64_t h, size_t i)
{
    size_t k = h & (x->cap - 1);
    while (x->ix[k])
        k = (k + 1) & (x->cap - 1);
    x->ix[k] = (uint32_t)i + 1;
}

/* Grows an array of n elements of size sz to hold one more; 0: out of memory. */
static int cgi_array_room(void *pv, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 1;
    size_t ncap = *cap ? *cap * 2 : 256;
    void *nv = realloc(*(void **)pv, ncap * sz);
    if (!nv) return 0;
    *(void **)pv = nv, *cap = ncap;
    return 1;
}

/* The row of rec's entry point, made when new; NULL: out of memory. */
static cgi_row *cgi_row_of(cgi_report_writer *w, const cgi_stats_record *rec)
{
    uint64_t h = cgi_hash(rec->api, sizeof rec->api, rec->name, sizeof rec->name);
    for (size_t k = h & (w->rowix.cap - 1); w->rowix.cap && w->rowix.ix[k]; k = (k + 1) & (w->rowix.cap - 1)) {
        cgi_row *row = cgi_row_at(w, w->rowix.ix[k] - 1);
        if (strncmp(row->api, rec->api, sizeof rec->api) == 0 &&
            strncmp(CGI_ROW_NAME(row), rec->name, sizeof rec->name) == 0)
            return row;
    }
    if (!cgi_index_room(&w->rowix, w->nrow, w, cgi_row_hash)) return NULL;
    if (w->nrow == w->nblk * CGI_ROW_BLOCK) {
        if (!cgi_array_room(&w->rowblk, &w->blkcap, w->nblk, sizeof *w->rowblk) ||
            !(w->rowblk[w->nblk] = malloc(CGI_ROW_BLOCK * sizeof(cgi_row))))
            return NULL;
        w->nblk++;
    }
    size_t la = strnlen(rec->api, sizeof rec->api), ln = strnlen(rec->name, sizeof rec->name),
           ld = strnlen(rec->domain, sizeof rec->domain);
    char *names = cgi_arena_take(w, la + ln + ld + 3);
    if (!names) return NULL;
    memcpy(names, rec->api, la), names[la] = '\0';
    memcpy(names + la + 1, rec->name, ln), names[la + 1 + ln] = '\0';
    memcpy(names + la + ln + 2, rec->domain, ld), names[la + ln + 2 + ld] = '\0';
    cgi_row *row = cgi_row_at(w, w->nrow);
    *row = (cgi_row){.api = names,
                     .name_at = (uint8_t)(la + 1),
                     .domain_at = (uint8_t)(la + ln + 2),
                     .transition = rec->transition,
                     .scope = rec->scope,
                     .blocking = rec->blocking};
    cgi_index_put(&w->rowix, h, w->nrow++);
    if ((int)la > w->apiw) w->apiw = (int)la;
    return row;
}

/* Counts host among the distinct ones; 0: out of memory. */
static int cgi_note_host(cgi_report_writer *w, const char *host, size_t cap)
{
    uint64_t h = cgi_hash(host, cap, NULL, 0);
    for (size_t k = h & (w->hostix.cap - 1); w->hostix.cap && w->hostix.ix[k]; k = (k + 1) & (w->hostix.cap - 1))
        if (strncmp(w->hosts[w->hostix.ix[k] - 1], host, cap) == 0) return 1;
    if (!cgi_index_room(&w->hostix, w->nhosts, w, cgi_host_hash) ||
        !cgi_array_room(&w->hosts, &w->hostcap, w->nhosts, sizeof *w->hosts))
        return 0;
    if (!(w->hosts[w->nhosts] = cgi_arena_str(w, host, cap))) return 0;
    cgi_index_put(&w->hostix, h, w->nhosts++);
    return 1;
}

/* Notes the quirks the process applied (a few per process). */
static void cgi_note_applied(cgi_report_writer *w, const cgi_stats_region *r)
{
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS && !w->oom; i++) {
        const cgi_quirk_rec *q = &r->quirk[i];
        if (!atomic_load(&q->valid) || !q->applied) continue;
        size_t k = 0;
        while (k < w->napplied && strncmp(w->applied[k], q->name, sizeof q->name) != 0)
            k++;
        if (k < w->napplied) continue;
        if (!cgi_array_room(&w->applied, &w->appliedcap, w->napplied, sizeof *w->applied) ||
            !(w->applied[w->napplied] = cgi_arena_str(w, q->name, sizeof q->name)))
            w->oom = 1;
        else
            w->napplied++;
    }
}

/* A process's entry points into the combined table. */
static void cgi_fold(cgi_report_writer *w, const cgi_stats_region *r)
{
    cgi_note_applied(w, r);
    if (!cgi_note_host(w, r->h.host, sizeof r->h.host)) w->oom = 1;
    for (uint32_t k = 0; k < cgi_nrec(r) && !w->oom; k++) {
        const cgi_stats_record *rec = &r->r[k];
        if (cgi_ctr_calls(&rec->c) == 0) continue;
        cgi_row *row = cgi_row_of(w, rec);
        if (!row) {
            w->oom = 1;
            break;
        }
        if (strncmp(CGI_ROW_DOMAIN(row), rec->domain, sizeof rec->domain) != 0 || row->transition != rec->transition ||
            row->scope != rec->scope || row->blocking != rec->blocking)
            row->mixed = 1;
        cgi_add(&row->t, &rec->c);
        if ((cgi_ld(&rec->c.errors) || cgi_ld(&rec->c.states)) && !row->codes && w->ncodelists < CGI_ROWS_WITH_CODES) {
            /* Bounded: the first CGI_ROWS_WITH_CODES rows with such results name them. */
            char *mem = cgi_arena_take(w, sizeof *row->codes + 8);
            if (!mem) {
                w->oom = 1;
                break;
            }
            row->codes = (cgi_code_list *)(((uintptr_t)mem + 7) & ~(uintptr_t)7);
            memset(row->codes, 0, sizeof *row->codes);
            w->ncodelists++;
        }
        if (row->codes) cgi_codes_add(row->codes, rec, CGI_CODES_MERGED);
        uint64_t m = cgi_ld(&rec->c.max_ns);
        if (m > row->max_ns) row->max_ns = m;
        /* Peaks of several processes: the most any one had (they are not
         * threads of one process, so they do not add up). */
        if (cgi_peak_of(&rec->c.inside) > row->peak_inside) row->peak_inside = cgi_peak_of(&rec->c.inside);
        if (cgi_peak_of(&rec->c.waiting) > row->peak_waiting) row->peak_waiting = cgi_peak_of(&rec->c.waiting);
    }
}

/* One process's section (one with calls). */
static void cgi_text_process(FILE *out, const cgi_proc_view *p, const cgi_totals *pt)
{
    {
        const cgi_stats_region *r = p->region;
        cgi_totals t = *pt;
        int state, status;
        cgi_exit_of(p, &state, &status);
        char ex[80];
        if (state == CGI_PROC_EXITED)
            snprintf(ex, sizeof ex, "exit %d", status);
        else if (state == CGI_PROC_SIGNALED) {
            char sig[32];
            cgi_signal_name(status, sig, sizeof sig);
            snprintf(ex, sizeof ex, "killed by %s%s", sig, p->have_exit ? "" : ", noted by its signal hook");
        } else if (state == CGI_PROC_EXECED)
            snprintf(ex, sizeof ex, "replaced by exec");
        else
            snprintf(ex, sizeof ex, "ended without exit handlers");
        fprintf(out, "callguard: pid %d%s", r->h.pid, r->h.host[0] ? " on " : "");
        CGI_TEXT_FIELD(out, r->h.host);
        fprintf(out, " (%s): ", ex);
        cgi_text_str(out, r->h.command, 200);
        fputc('\n', out);
        cgi_text_violations(out, r);
        cgi_text_quirks(out, r);
        cgi_text_in_flight(out, r, state, status);
        cgi_text_stalls(out, r, t.stalls);
        /* The api column is as wide as the longest API name of this process. */
        int apiw = 4;
        for (uint32_t k = 0; k < cgi_nrec(r); k++) {
            int len = (int)strnlen(r->r[k].api, sizeof r->r[k].api);
            if (len > apiw && cgi_ctr_calls(&r->r[k].c)) apiw = len;
        }
        fprintf(out, "  %-*s %-36s %10s %8s %8s %8s %11s %10s %12s %7s %10s  %s\n", apiw, "api", "entry point", "calls",
                "nested", "errors", "states", "total ms", "max ms", "lock wait ms", "stalls", "peak in/wt", "policy");
        for (uint32_t k = 0; k < cgi_nrec(r); k++) {
            const cgi_stats_record *rec = &r->r[k];
            const cg_counters *c = &rec->c;
            if (cgi_ctr_calls(c) == 0) continue;
            char policy[128];
            int len = snprintf(policy, sizeof policy, "transition=%s", cgi_transition_name(rec->transition));
            if (rec->domain[0])
                len += snprintf(policy + len, sizeof policy - (size_t)len, " serialize=%s%s", rec->domain,
                                rec->scope == CG_SCOPE_HANDLE ? ":handle" : "");
            if (rec->blocking) snprintf(policy + len, sizeof policy - (size_t)len, " blocking");
            char peaks[24];
            fprintf(out, "  %-*s %-36s %10lu %8lu %8lu %8lu %11.3f %10.3f %12.3f %7lu %10s  %s\n", apiw, rec->api,
                    rec->name, (unsigned long)cgi_ctr_calls(c), (unsigned long)cgi_ld(&c->nested),
                    (unsigned long)cgi_ld(&c->errors), (unsigned long)cgi_ld(&c->states), cgi_ms(cgi_ctr_total_ns(c)),
                    cgi_ms(cgi_ld(&c->max_ns)), cgi_ms(cgi_ld(&c->lock_wait_ns)), (unsigned long)cgi_ld(&c->stalls),
                    cgi_text_peaks(peaks, sizeof peaks, cgi_peak_of(&c->inside), cgi_peak_of(&c->waiting)), policy);
            cgi_code_list codes = {.n = 0};
            cgi_codes_add(&codes, rec, CGI_STATS_MAX_CODES);
            cgi_text_codes(out, apiw + 5, &codes);
        }
        if (p->have_trace)
            fprintf(out, "  timeline: %lu events kept, %lu dropped", (unsigned long)p->trace_events,
                    (unsigned long)p->trace_dropped);
        if (p->have_trace && p->trace_dropped)
            fprintf(out, " (each thread keeps its last %u calls; threads past the first %u keep none)",
                    CGI_TRACE_EVENTS - 1, CGI_TRACE_MAX_THREADS);
        if (p->have_trace) fputc('\n', out);
    }
}

/* Several processes (a tree, or reports merged from several files): one
 * more table, each entry point's counts over all of them. */
static void cgi_text_combined(FILE *out, const cgi_report_writer *w)
{
    int apiw = w->apiw > 4 ? w->apiw : 4;
    fprintf(out, "callguard: all %zu processes", w->nproc);
    if (w->nhosts > 1 || (w->nhosts == 1 && w->hosts[0][0]))
        fprintf(out, " on %zu host%s", w->nhosts, w->nhosts == 1 ? "" : "s");
    fprintf(out, ":\n  %-*s %-36s %10s %8s %8s %8s %11s %10s %12s %7s %10s  %s\n", apiw, "api", "entry point", "calls",
            "nested", "errors", "states", "total ms", "max ms", "lock wait ms", "stalls", "peak in/wt", "policy");
    for (size_t x = 0; x < w->nrow; x++) {
        const cgi_row *row = cgi_row_at(w, x);
        char policy[128];
        int len = snprintf(policy, sizeof policy, "transition=%s", cgi_transition_name(row->transition));
        if (CGI_ROW_DOMAIN(row)[0])
            len += snprintf(policy + len, sizeof policy - (size_t)len, " serialize=%s%s", CGI_ROW_DOMAIN(row),
                            row->scope == CG_SCOPE_HANDLE ? ":handle" : "");
        if (row->blocking) len += snprintf(policy + len, sizeof policy - (size_t)len, " blocking");
        if (row->mixed) snprintf(policy + len, sizeof policy - (size_t)len, " (differs between processes)");
        char peaks[24];
        fprintf(out, "  %-*s %-36s %10lu %8lu %8lu %8lu %11.3f %10.3f %12.3f %7lu %10s  %s\n", apiw, row->api,
                CGI_ROW_NAME(row), (unsigned long)row->t.calls, (unsigned long)row->t.nested,
                (unsigned long)row->t.errors, (unsigned long)row->t.states, cgi_ms(row->t.total_ns),
                cgi_ms(row->max_ns), cgi_ms(row->t.lock_wait_ns), (unsigned long)row->t.stalls,
                cgi_text_peaks(peaks, sizeof peaks, row->peak_inside, row->peak_waiting), policy);
        if (row->codes) cgi_text_codes(out, apiw + 5, row->codes);
    }
}

/* ---- advice: the known bugs the run's concurrency would meet ------------------
 * After the run, from the combined table and the quirks file in use: each
 * entry point that several threads were inside at once is checked against
 * every quirk that serializes it, whatever driver ran (quirks.c). Where a
 * process applied the quirk, the advice says so instead of the fix. */

cgi_quirks_naming_fn *cgi_report_quirks;

typedef struct cgi_advice {
    FILE *out;
    cg_report_format format;
    const cgi_report_writer *w;
    const cgi_row *row;
    size_t n; /* items written */
} cgi_advice;

static int cgi_fix_item(const char *item, size_t n, void *arg)
{
    const char **p = arg; /* [0]: the domain, [1]: NULL before the first item */
    fprintf((FILE *)p[2], "%s%.*s=%s", p[1] ? "," : "", (int)n, item, p[0]);
    p[1] = "";
    return 0;
}

/* "--serialize a=D,b=D": the quirk's own fix, as callguard run takes it. */
static void cgi_fix(FILE *out, const cgi_quirk_view *q)
{
    const char *p[3] = {q->domain, NULL, (const char *)out};
    fputs("--serialize ", out);
    pini_split(q->sites, ",", cgi_fix_item, p);
}

static int cgi_applied_in_run(const cgi_report_writer *w, const char *name)
{
    for (size_t k = 0; k < w->napplied; k++)
        if (strcmp(w->applied[k], name) == 0) return 1;
    return 0;
}

static void cgi_advice_item(const cgi_quirk_view *q, void *arg)
{
    cgi_advice *a = arg;
    const cgi_row *row = a->row;
    int applied = cgi_applied_in_run(a->w, q->name);
    /* Applied: it serialized the entry point, so one thread was inside and
     * others waited; say so where threads did wait. */
    if (applied ? row->peak_inside < 2 && row->peak_waiting < 1 : row->peak_inside < 2) return;
    FILE *out = a->out;
    if (a->format == CG_REPORT_JSON) {
        fprintf(out, "%s\n    {\"entry_point\": ", a->n++ ? "," : "");
        cgi_json_str(out, CGI_ROW_NAME(row));
        fputs(", \"api\": ", out);
        cgi_json_str(out, row->api);
        fprintf(out, ", \"peak_inside\": %u, \"peak_waiting\": %u, \"quirk\": ", row->peak_inside, row->peak_waiting);
        cgi_json_str(out, q->name);
        fputs(",\n     \"affects\": {\"api\": ", out);
        cgi_json_str(out, q->api);
        fputs(", \"vendor\": [", out);
        for (unsigned k = 0; k < q->nvendors; k++)
            fprintf(out, "%s\"0x%04x\"", k ? ", " : "", (unsigned)q->vendor[k]);
        fputs("], \"driver\": ", out);
        cgi_json_str_or_null(out, q->driver);
        fputs(", \"versions\": ", out);
        cgi_json_str(out, q->versions);
        fputs(", \"library\": ", out);
        cgi_json_str_or_null(out, q->library);
        fputs("},\n     \"why\": ", out);
        cgi_json_str(out, q->why);
        fputs(", \"source\": ", out);
        cgi_json_str(out, q->source);
        fprintf(out, ", \"applied\": %s, \"fix\": ", applied ? "true" : "false");
        if (applied) {
            fputs("null", out);
        } else {
            fputc('"', out);
            cgi_fix(out, q);
            fputc('"', out);
        }
        fputc('}', out);
        return;
    }
    a->n++;
    fputs("callguard: advice: ", out);
    cgi_text_str(out, CGI_ROW_NAME(row), CGI_NAME_MAX);
    if (applied) {
        fprintf(out, " (at most %u inside, %u waiting at once): quirk ", row->peak_inside, row->peak_waiting);
        cgi_text_str(out, q->name, 64);
        fputs(" matched the running driver and was applied: ", out);
        cgi_text_str(out, q->sites, 256);
        fputs(" serialized in domain ", out);
        cgi_text_str(out, q->domain, CGI_DOMAIN_NAME_MAX);
        fputs("\n", out);
        return;
    }
    fprintf(out, " had %u threads inside at once, which known bug ", row->peak_inside);
    cgi_text_str(out, q->name, 64);
    fprintf(out, " breaks on %s drivers", q->api);
    for (unsigned k = 0; k < q->nvendors; k++)
        fprintf(out, "%s0x%04x", k ? "," : " of vendor ", (unsigned)q->vendor[k]);
    if (q->driver) {
        fputs(" named '", out);
        cgi_text_str(out, q->driver, 128);
        fputc('\'', out);
    }
    fputs(" versions ", out);
    cgi_text_str(out, q->versions, 128);
    if (q->library) {
        fputs(" with ", out);
        cgi_text_str(out, q->library, 128);
    }
    fputs(": ", out);
    cgi_text_str(out, q->why, 256);
    fputs(" (", out);
    cgi_text_str(out, q->source, 256);
    fputs(")\n  fix: callguard run ", out);
    cgi_fix(out, q);
    fputs(" -- PROGRAM\n", out);
}

/* The advice of the whole report: JSON's "advice" list, or text lines. */
static void cgi_advice_all(FILE *out, const cgi_report_writer *w)
{
    cgi_advice a = {.out = out, .format = w->format, .w = w};
    if (w->format == CG_REPORT_JSON) fputs(",\n  \"advice\": [", out);
    for (size_t x = 0; x < w->nrow; x++) {
        a.row = cgi_row_at(w, x);
        if (cgi_report_quirks && (a.row->peak_inside >= 2 || a.row->peak_waiting >= 1))
            cgi_report_quirks(CGI_ROW_NAME(a.row), cgi_advice_item, &a);
    }
    if (w->format == CG_REPORT_JSON) fputs(a.n ? "\n  ]" : "]", out);
}

static void cgi_text_end(FILE *out, const cgi_report_writer *w, size_t lost)
{
    cgi_advice_all(out, w);
    const cgi_totals all = w->all;
    size_t nproc = w->nproc;
    if (nproc > 1) cgi_text_combined(out, w);
    fprintf(out,
            CGI_OUT_TEXT_HEAD "%zu process%s, %lu calls (%lu nested, %lu errors, %lu states), %.3f ms in the driver, "
                              "%.3f" CGI_OUT_TEXT_TOTALS "%lu stalls\n",
            nproc, nproc == 1 ? "" : "es", (unsigned long)all.calls, (unsigned long)all.nested,
            (unsigned long)all.errors, (unsigned long)all.states, cgi_ms(all.total_ns), cgi_ms(all.lock_wait_ns),
            (unsigned long)all.stalls);
    if (lost)
        fprintf(out,
                "callguard: %zu more process%s of the run left no statistics (its storage was full, read-only or "
                "removed, or it was not guarded: %s calls are not counted)\n",
                lost, lost == 1 ? "" : "es", lost == 1 ? "its" : "their");
}

int cgi_report_begin(const char *path, cg_report_format format, cgi_report_writer **out)
{
    *out = NULL;
    if (!path || !*path) return cgi_fail(CG_EINVAL, "report path is empty: expected a file name or '-'");
    if (format != CG_REPORT_JSON && format != CG_REPORT_TEXT)
        return cgi_fail(CG_EINVAL, "report format %d: expected CG_REPORT_JSON or CG_REPORT_TEXT", (int)format);
    cgi_report_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return cgi_fail(CG_ENOMEM, "out of memory");
    }
    w->format = format;
    int e = cgi_outfile_open(path, &w->o);
    if (e) {
        free(w->path), free(w);
        return cgi_fail(CG_EIO, "cannot write report %s: %s", path, strerror(e));
    }
    if (format == CG_REPORT_JSON) cgi_json_begin(w->o.f);
    *out = w;
    return CG_OK;
}

void cgi_report_add(cgi_report_writer *w, const cgi_proc_view *p)
{
    cgi_totals t = cgi_proc_totals(p->region);
    if (t.calls == 0) return; /* a process that made no guarded call is not listed */
    if (w->format == CG_REPORT_JSON)
        cgi_json_process(w->o.f, p, &t, w->nproc);
    else
        cgi_text_process(w->o.f, p, &t);
    cgi_fold(w, p->region); /* the combined table, and the advice of either format */
    cgi_sum(&w->all, &t);
    w->nproc++;
}

static void cgi_report_free(cgi_report_writer *w)
{
    for (cgi_arena_block *b = w->arena, *next; b; b = next)
        next = b->next, free(b);
    for (size_t b = 0; b < w->nblk; b++)
        free(w->rowblk[b]);
    free(w->rowblk), free(w->rowix.ix), free(w->hosts), free(w->hostix.ix), free(w->applied), free(w->path), free(w);
}

/* A report that cannot be written leaves no file and is named with the
 * path and the error (outfile.h). */
int cgi_report_end(cgi_report_writer *w, size_t lost)
{
    if (!w) return CG_OK;
    int e = 0;
    char note[1024];
    if (w->oom && w->o.own && w->o.tmp) {
        /* The combined table would be wrong: no report rather than a false one. */
        fclose(w->o.f);
        unlink(w->o.tmp);
        free(w->o.tmp);
    } else {
        if (w->format == CG_REPORT_TEXT)
            cgi_text_end(w->o.f, w, lost);
        else
            cgi_json_end(w->o.f, w->nproc, &w->all, lost, w);
        e = cgi_outfile_close(&w->o, w->path, "report", note, sizeof note);
    }
    int rc = CG_OK;
    if (w->oom)
        rc = cgi_fail(CG_ENOMEM, "cannot write report %s: out of memory", w->path);
    else if (e == EEXIST)
        rc = cgi_fail(CG_EIO, "%s", note);
    else if (e)
        rc = cgi_fail(CG_EIO, "cannot write report %s: %s", w->path, strerror(e));
    cgi_report_free(w);
    return rc;
}

int cgi_report_to(const char *path, const cgi_proc_view *procs, size_t n, size_t lost, cg_report_format format)
{
    cgi_report_writer *w;
    int rc = cgi_report_begin(path, format, &w);
    if (rc != CG_OK) return rc;
    for (size_t i = 0; i < n; i++)
        cgi_report_add(w, &procs[i]);
    return cgi_report_end(w, lost);
}
