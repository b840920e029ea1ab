/* The text report's sections, for people: one per process (what went
 * wrong first, then the table of its entry points), the combined table of
 * several, the view across ranks, and the totals line. The summary before
 * them and the advice after are summary.c's; the tables are table.c's. */
#define _GNU_SOURCE
#include "internal.h"

#include "../common/trace_file.h"
#include "outfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Whether the process called an entry point of the quirk (its sites, or
 * a suffix variant of one counted under its own name: cuMemFreeAsync_ptsz);
 * with two, with several threads inside it at once. */
static int cgi_quirk_called(const cgi_stats_region *r, const cgi_quirk_rec *q, int two)
{
    for (uint32_t k = 0; k < cgi_nrec(r); k++) {
        const cgi_stats_record *rec = &r->r[k];
        size_t n = strnlen(rec->name, sizeof rec->name);
        for (const char *s = q->sites; n && *s && s < q->sites + sizeof q->sites;) {
            size_t len = strcspn(s, ", ");
            if (len && len <= n && strncmp(s, rec->name, len) == 0 && (len == n || rec->name[len] == '_') &&
                (two ? cgi_peak_of(&rec->c.inside) >= 2 : cgi_ctr_calls(&rec->c) > 0))
                return 1;
            s += len;
            s += strspn(s, ", ");
        }
    }
    return 0;
}

static int cgi_quirk_advice_only(const cgi_quirk_rec *q)
{
    return !q->applied && strncmp(q->not_applied, "advice only", 11) == 0;
}

/* Whether a quirk matters to the process: applied, it called one of its
 * entry points; advice only, one of them had several threads inside at
 * once (what its advice is about, as the report's advice: advice.c); not
 * applied otherwise, always (a quirks file's mistake). PoCL's quirk in
 * mpirun's hwloc probe, or CUDA's IPC quirk in a process that made no IPC
 * import, did nothing there. */
static int cgi_quirk_matters(const cgi_stats_region *r, const cgi_quirk_rec *q)
{
    if (q->applied) return cgi_quirk_called(r, q, 0);
    return !cgi_quirk_advice_only(q) || cgi_quirk_called(r, q, 1);
}

/* The quirks matched that did nothing in the process, in one line (all
 * of them in full: --all). */
static void cgi_text_quirks_idle(FILE *out, const cgi_stats_region *r)
{
    int n = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++) {
        const cgi_quirk_rec *q = &r->quirk[i];
        if (!atomic_load(&q->valid) || cgi_quirk_matters(r, q)) continue;
        fputs(n++ ? ", " : "  matched, nothing of theirs here (--all: in full): quirk ", out);
        CGI_TEXT_FIELD(out, q->name);
        fputs(q->applied ? " (applied; none of its calls made)" : " (advice only; its calls never two at once)", out);
    }
    if (n) fputc('\n', out);
}

/* One line per quirk matched: what it serialized (or why it did not), the
 * driver it matched, its source; then how many more were not kept. At a
 * width, only those whose entry points the process called. */
static void cgi_text_quirks(FILE *out, const cgi_stats_region *r, int width)
{
    if (width) cgi_text_quirks_idle(out, r);
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++) {
        const cgi_quirk_rec *q = &r->quirk[i];
        if (!atomic_load(&q->valid) || (width && !cgi_quirk_matters(r, q))) continue;
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
        /* What it matched on a line of its own: the lines stay within the width. */
        fprintf(out, "\n    matched %s driver '", q->api);
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
        fprintf(out, "  %" PRIu64 " more quirk%s matched, not kept here (a process keeps %d)\n", dropped,
                dropped == 1 ? "" : "s", CGI_STATS_MAX_QUIRKS);
}

static uint64_t cgi_violations_total(const cgi_stats_region *r)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_VIOLATIONS; i++)
        if (atomic_load(&r->violation[i].valid)) n += atomic_load(&r->violation[i].count);
    return n;
}

/* First in a process's table: what the program did wrong comes before how long it took. */
static void cgi_text_violations(FILE *out, const cgi_stats_region *r)
{
    uint64_t total = cgi_violations_total(r), dropped = atomic_load(&r->h.violations_dropped);
    uint64_t untracked = atomic_load(&r->h.handles_untracked);
    if (!total && !dropped && !untracked) return;
    fprintf(out,
            "  %" PRIu64 " thread-rule violation%s: calls the API's rules forbid to overlap on one handle "
            "(docs/threads.md)\n",
            total + dropped, total + dropped == 1 ? "" : "s");
    for (unsigned i = 0; i < CGI_STATS_MAX_VIOLATIONS; i++) {
        const cgi_violation *v = &r->violation[i];
        if (!atomic_load(&v->valid)) continue;
        unsigned long c = (unsigned long)atomic_load(&v->count);
        if (v->kind == CGI_VIOLATION_SEQUENCE)
            fprintf(out,
                    "    sequence: %s %s %s %s (thread %d) after its own %s, and %s %s %s (thread %d) set it in "
                    "between; handle 0x%" PRIx64 ", %lu time%s\n",
                    v->api, v->name, v->access, v->param, v->tid, v->set_name[0] ? v->set_name : "setting", v->other,
                    v->other_access, v->other_param, v->other_tid, v->handle, c, c == 1 ? "" : "s");
        else
            fprintf(out,
                    "    overlap: %s %s %s %s (thread %d) while %s %s %s (thread %d) was inside; handle 0x%" PRIx64 ", "
                    "%lu time%s\n",
                    v->api, v->name, v->access, v->param, v->tid, v->other, v->other_access, v->other_param,
                    v->other_tid, v->handle, c, c == 1 ? "" : "s");
    }
    if (dropped)
        fprintf(out, "    %" PRIu64 " more of kinds not kept (a process keeps %d kinds)\n", dropped,
                CGI_STATS_MAX_VIOLATIONS);
    if (untracked)
        fprintf(out, "    %" PRIu64 " checked calls were not checked: the checker's table of handles was full\n",
                untracked);
}

/* What the hang page knows of a call in flight: the runtime held, and
 * where in Python it was made. */
static void cgi_text_hang_tail(FILE *out, const cgi_hang_call *e)
{
    if (!e) return;
    int py = strcmp(e->runtime, "cpython") == 0;
    if (e->held == CGI_HELD_YES) {
        fputs(py ? ", holding the GIL" : ", holding ", out);
        if (!py) CGI_TEXT_FIELD(out, e->runtime);
    } else if (e->held == CGI_HELD_UNKNOWN && e->runtime[0]) {
        fputs(py ? ", the GIL held: unknown" : ", the runtime held: unknown", out);
    }
    if (e->py_file[0]) fputc(',', out);
    cgi_status_where(out, e);
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
    const char *why = NULL; /* what is known of an end callguard did not see, on a line of its own */
    if (state == CGI_PROC_SIGNALED)
        cgi_text_signal(status, sig, sizeof sig), snprintf(how, sizeof how, "died of %s", sig);
    else if (state == CGI_PROC_EXITED)
        snprintf(how, sizeof how, "exited with status %d", status);
    else if (state == CGI_PROC_EXECED)
        snprintf(how, sizeof how, "was replaced by exec");
    else
        snprintf(how, sizeof how, "ended without exit handlers");
    if (state == CGI_PROC_RUNNING)
        why = atomic_load(&r->h.signal_hook) ? "(and without a fatal signal the signal hook saw: SIGKILL, another "
                                               "uncatchable end, or _exit)"
                                             : "(how is not known: callguard did not reap it; --signals record would "
                                               "note a fatal signal)";
    if (nthreads) {
        fprintf(out, "  %s with", how);
        for (size_t g = 0; g < ngroups; g++)
            fprintf(out, "%s %d thread%s %s %s", g ? (g + 1 == ngroups ? " and" : ",") : "", count[g],
                    count[g] == 1 ? "" : "s", waiting[g] ? "waiting for the lock of" : "inside",
                    recs[g] ? recs[g]->name : "an unknown entry point");
        fputc('\n', out);
        if (why) fprintf(out, "    %s\n", why);
        for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
            const cgi_slot *slot = &r->slot[i];
            if (!cgi_in_flight(slot)) continue;
            const cgi_stats_record *rec = cgi_slot_record(r, slot);
            /* "called": when it entered callguard; a call that waited for
             * its lock went into the driver later (the slot keeps one time). */
            fprintf(out, "    thread %d \"", atomic_load(&slot->tid));
            CGI_TEXT_FIELD(out, slot->thread);
            fprintf(out, "\" %s %s %s", cgi_waiting(slot) ? "waiting for the lock of" : "inside", rec ? rec->api : "?",
                    rec ? rec->name : "?");
            const cgi_hang_call *known = cgi_hang_of_slot(r, slot);
            cgi_text_args(out, known);
            fprintf(out, ", called %.3f ms after start", cgi_ms(cgi_entered_ns(r, slot)));
            cgi_text_hang_tail(out, known);
            fputc('\n', out);
        }
    }
    if (unknown)
        fprintf(out,
                "  %u thread%s found no free slot (%d at most): whether %s inside a call at the end is not known\n",
                unknown, unknown == 1 ? "" : "s", CGI_STATS_MAX_SLOTS, unknown == 1 ? "it was" : "they were");
}

/* The last hang report the process wrote (CALLGUARD_HANG_MS), its calls as
 * on stderr. The page kept without the variable shows in the calls in
 * flight at the end (cgi_text_in_flight): a call that took a second and
 * returned is no hang. */
static void cgi_text_hang(FILE *out, const cgi_stats_region *r)
{
    const cgi_hang_page *pg = &r->hang;
    uint64_t reports = atomic_load(&pg->reports);
    if (!reports || !pg->asked || (atomic_load(&pg->gen) & 1)) return;
    char shown[64] = "";
    if (pg->in_flight > pg->ncalls)
        snprintf(shown, sizeof shown, ", %u in flight (%u shown)", pg->in_flight, pg->ncalls);
    fprintf(out,
            "  hang reported %" PRIu64 " time%s (CALLGUARD_HANG_MS=%" PRIu64
            "), the last %.3f ms after start-up%s%s:\n",
            reports, reports == 1 ? "" : "s", pg->hang_ns / 1000000u, cgi_ms(pg->at_ns), shown,
            pg->over ? " (those calls returned later)" : "");
    for (uint32_t i = 0; i < pg->ncalls && i < CGI_HANG_MAX_CALLS; i++) {
        const cgi_hang_call *e = &pg->call[i];
        fprintf(out, "    tid %d ", e->tid);
        CGI_TEXT_FIELD(out, e->thread);
        fputs(": ", out);
        CGI_TEXT_FIELD(out, e->api);
        fputc(' ', out);
        CGI_TEXT_FIELD(out, e->name);
        cgi_text_args(out, e);
        fprintf(out, ", %" PRIu64 " ms", e->age_ns / 1000000u);
        if (e->waiting) {
            fputs(", waits for lock ", out);
            cgi_text_str(out, e->domain[0] ? e->domain : "(a handle lock)", sizeof e->domain);
            if (e->holder_tid) fprintf(out, " held by tid %d", e->holder_tid);
        }
        if (e->loader) fputs(", waits for the dynamic loader's lock (glibc)", out);
        cgi_text_hang_tail(out, e);
        fputc('\n', out);
        int h;
        const char *quirk = cgi_behind_quirk(r->quirk, CGI_STATS_MAX_QUIRKS, pg->call,
                                             pg->ncalls < CGI_HANG_MAX_CALLS ? pg->ncalls : CGI_HANG_MAX_CALLS, i, &h);
        if (quirk) cgi_text_behind(out, e, &pg->call[h], quirk);
    }
    if (pg->in_flight > pg->ncalls) fprintf(out, "    %u in flight (%u shown)\n", pg->in_flight, pg->ncalls);
    for (uint32_t i = 0; i < pg->nwaiters && i < CGI_HANG_MAX_WAITERS; i++) {
        fprintf(out, "    tid %d ", pg->waiter[i].tid);
        CGI_TEXT_FIELD(out, pg->waiter[i].thread);
        fputs(": in no guarded call, waits for the GIL (cpython)\n", out);
    }
}

/* The calls that were in flight for the hang threshold and returned, the
 * slowest first: each with its thread and the Python line the hang page
 * had read for it; the three slowest at a width, every one kept without. */
static void cgi_text_late(FILE *out, const cgi_stats_region *r, int width)
{
    const cgi_late_call *v[CGI_LATE_MAX];
    size_t n = cgi_late_slowest_first(r, v), show = width && n > 3 ? 3 : n;
    uint64_t more = cgi_late_dropped(r, n);
    if (!n && !more) return;
    fprintf(out, "  %lu call%s returned after the hang threshold", (unsigned long)(n + more), n + more == 1 ? "" : "s");
    if (r->hang.hang_ns) fprintf(out, " (%" PRIu64 " ms)", r->hang.hang_ns / 1000000u);
    fputs(n > 1 ? ", the slowest first:\n" : ":\n", out);
    for (size_t i = 0; i < show; i++) {
        const cgi_hang_call *e = &v[i]->call;
        fputs("    ", out);
        CGI_TEXT_FIELD(out, e->api);
        fputc(' ', out);
        CGI_TEXT_FIELD(out, e->name);
        cgi_text_args(out, e);
        fprintf(out, " %" PRIu64 " ms, thread %d \"", (v[i]->ns + 500000u) / 1000000u, e->tid);
        CGI_TEXT_FIELD(out, e->thread);
        fputc('"', out);
        cgi_text_hang_tail(out, e);
        fputc('\n', out);
    }
    if (show < n)
        fprintf(out, "    %zu more kept, %" PRIu64 " ms at most each (--all lists them)\n", n - show,
                (v[show]->ns + 500000u) / 1000000u);
    if (more)
        fprintf(out, "    %" PRIu64 " faster one%s not kept (a process keeps %d)\n", more, more == 1 ? "" : "s",
                CGI_LATE_MAX);
}

/* "callguard: pid N on HOST, rank R (local L) (exit 0): COMMAND", the section's first line. */
static void cgi_text_head(FILE *out, const cgi_proc_view *p, int state, int status)
{
    const cgi_stats_region *r = p->region;
    char ex[80];
    if (state == CGI_PROC_EXITED)
        snprintf(ex, sizeof ex, "exit %d", status);
    else if (state == CGI_PROC_SIGNALED) {
        char sig[32];
        cgi_text_signal(status, sig, sizeof sig);
        snprintf(ex, sizeof ex, "killed by %s%s", sig, p->have_exit ? "" : ", noted by its signal hook");
    } else if (state == CGI_PROC_EXECED)
        snprintf(ex, sizeof ex, "replaced by exec");
    else
        snprintf(ex, sizeof ex, "ended without exit handlers");
    fprintf(out, "callguard: pid %d%s", r->h.pid, r->h.host[0] ? " on " : "");
    CGI_TEXT_FIELD(out, r->h.host);
    if (r->h.rank_set & CGI_RANK_SET) fprintf(out, ", rank %u", r->h.rank);
    if ((r->h.rank_set & CGI_RANK_SET) && (r->h.rank_set & CGI_LOCAL_RANK_SET))
        fprintf(out, " (local %u)", r->h.local_rank);
    fprintf(out, " (%s): ", ex);
    cgi_text_str(out, r->h.command, 200);
    fputc('\n', out);
}

/* Lines written as marked lines of a fold (CGI_FOLD_MARK): kind 'u' or
 * 'r', sign '-' (shown unless folded) or '+' (only when folded). */
static void cgi_text_marked(FILE *out, const char *text, size_t len, char kind, char sign)
{
    while (len) {
        const char *nl = memchr(text, '\n', len);
        size_t n = nl ? (size_t)(nl - text) : len;
        fprintf(out, "%c%c%c%.*s\n", CGI_FOLD_MARK, kind, sign, (int)n, text);
        text += n + (nl != NULL), len -= n + (nl != NULL);
    }
}

/* Whether a row says something of its process beyond its time: failures,
 * a lock waited for, threads inside at once. */
static int cgi_row_matters(const cgi_trow *t)
{
    return t->t.errors || t->t.lock_wait_ns || t->peak_inside >= 2 || t->peak_waiting || t->mixed;
}

/* Whether a process's section says more than its head and table: a bad
 * end, calls in flight, a hang, stalls, late calls, violations, a quirk
 * whose entry points it called, a row that matters. */
static int cgi_proc_matters(const cgi_proc_view *p, const cgi_totals *pt, const cgi_trow *rows, size_t n)
{
    const cgi_stats_region *r = p->region;
    int state, status;
    cgi_exit_of(p, &state, &status);
    const cgi_late_call *late[CGI_LATE_MAX];
    size_t nlate = cgi_late_slowest_first(r, late);
    if (state != CGI_PROC_EXITED || status != 0 || pt->stalls || nlate || cgi_late_dropped(r, nlate) ||
        cgi_violations_total(r) || atomic_load(&r->h.violations_dropped) || atomic_load(&r->h.handles_untracked) ||
        atomic_load(&r->h.threads_unslotted) || atomic_load(&r->hang.reports) || p->trace_dropped)
        return 1;
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++)
        if (cgi_in_flight(&r->slot[i])) return 1;
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++)
        if (atomic_load(&r->quirk[i].valid) && cgi_quirk_matters(r, &r->quirk[i])) return 1;
    for (size_t i = 0; i < n; i++)
        if (cgi_row_matters(&rows[i])) return 1;
    return 0;
}

/* "108 calls, 889.123 ms: MPI_Init_thread 83.8%, ..." (the
 * rows sorted): a table in one line. */
static void cgi_text_table_line(FILE *out, const cgi_trow *rows, size_t n, const cgi_totals *pt)
{
    fprintf(out, "%" PRIu64 " call%s, %.3f ms", pt->calls, pt->calls == 1 ? "" : "s", cgi_ms(pt->total_ns));
    for (size_t k = 0; k < n && k < 3 && pt->total_ns >= 1000000; k++) {
        double pct = 100.0 * (double)rows[k].t.total_ns / (double)pt->total_ns;
        if (k && pct < 1.0) break;
        fprintf(out, "%s%s %.1f%%", k ? ", " : ": ", rows[k].name, pct);
    }
}

/* A process's table: in full, or where its kind is folded in one line. */
static int cgi_text_table(FILE *out, const cgi_proc_view *p, const cgi_totals *pt, cgi_trow *rows, size_t n, int width,
                          char fold)
{
    const cgi_stats_region *r = p->region;
    /* How the times were taken: docs/report.md, "Sampled times". */
    const char *timing = atomic_load(&r->h.timing) == CGI_TIMING_EXACT ? "exact" : "sampled";
    if (!fold) return cgi_table_write(out, rows, n, width, timing), 0;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return ENOMEM;
    cgi_table_write(f, rows, n, width, timing);
    if (fclose(f) != 0) return free(text), ENOMEM;
    cgi_text_marked(out, text, len, fold, '-');
    fprintf(out, "%c%c+  ", CGI_FOLD_MARK, fold);
    cgi_text_table_line(out, rows, n, pt);
    fputs(" (--all: table)\n", out);
    free(text);
    return 0;
}

/* The entry points left uncounted and without a row (report.h): one line,
 * cut to the width; past a few (a policy's `[defaults] count = no`), how
 * many and the first (the JSON's "uncounted" has them all). */
#define CGI_UNCOUNTED_NAMED 8
static void cgi_text_uncounted(FILE *out, const cgi_proc_view *p, int width)
{
    const cgi_stats_region *r = p->region;
    char line[1024];
    size_t all = 0;
    for (uint32_t k = 0; k < cgi_nrec(r); k++)
        all += cgi_left_uncounted(p, k);
    if (!all) return;
    size_t len =
        all > CGI_UNCOUNTED_NAMED
            ? (size_t)snprintf(line, sizeof line, "  not counted (their policy's count = no): %zu entry points:", all)
            : (size_t)snprintf(line, sizeof line, "  not counted (their policy's count = no):");
    size_t n = 0, named = all > CGI_UNCOUNTED_NAMED ? 3 : all;
    for (uint32_t k = 0; k < cgi_nrec(r) && len < sizeof line && n < named; k++)
        if (cgi_left_uncounted(p, k))
            len += (size_t)snprintf(line + len, sizeof line - len, "%s %s", n++ ? "," : "", r->r[k].name);
    if (n < all && len < sizeof line) len += (size_t)snprintf(line + len, sizeof line - len, ", ...");
    if (len >= sizeof line) len = sizeof line - 1;
    cgi_text_fit(out, line, len, width);
}

/* The section, its table folded (fold 'r') or not (0). */
static int cgi_text_section(FILE *out, const cgi_proc_view *p, const cgi_totals *pt, cgi_trow *rows, size_t n,
                            int width, unsigned *said, char fold)
{
    const cgi_stats_region *r = p->region;
    int state, status;
    cgi_exit_of(p, &state, &status);
    cgi_text_head(out, p, state, status);
    cgi_text_violations(out, r);
    cgi_text_quirks(out, r, width);
    cgi_text_in_flight(out, r, state, status);
    cgi_text_hang(out, r);
    cgi_text_stalls(out, r, pt->stalls, width, said);
    if (cgi_text_table(out, p, pt, rows, n, width, fold)) return ENOMEM;
    /* After the table, whose rows they detail: the calls that took long and returned. */
    cgi_text_late(out, r, width);
    if (p->have_trace)
        fprintf(out, "  timeline: %" PRIu64 " event%s kept, %" PRIu64 " dropped", p->trace_events,
                p->trace_events == 1 ? "" : "s", p->trace_dropped);
    if (p->have_trace && p->trace_dropped)
        fprintf(out, " (left out by --trace-max or a full disk; threads past the first %u keep none)",
                CGI_TRACE_MAX_THREADS);
    if (p->have_trace) fputc('\n', out);
    cgi_text_uncounted(out, p, width);
    return 0;
}

/* A process without a rank that did nothing unusual: its section, and the
 * line that says it where the report has ranks (it is their launcher). */
static int cgi_text_unranked(FILE *out, const cgi_proc_view *p, const cgi_totals *pt, cgi_trow *rows, size_t n,
                             int width, unsigned *said)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return ENOMEM;
    int e = cgi_text_section(f, p, pt, rows, n, width, said, 0);
    if (fclose(f) != 0 || e) return free(text), ENOMEM;
    cgi_text_marked(out, text, len, 'u', '-');
    free(text);
    /* The head's figures, then the command cut to the rest of the line. */
    const cgi_stats_region *r = p->region;
    char *head = NULL, *cmd = NULL;
    size_t hlen = 0, clen = 0;
    FILE *h = open_memstream(&head, &hlen), *c = open_memstream(&cmd, &clen);
    if (h) {
        fprintf(h, "callguard: pid %d%s", r->h.pid, r->h.host[0] ? " on " : "");
        CGI_TEXT_FIELD(h, r->h.host);
        fprintf(h, " (exit 0), no rank: %" PRIu64 " call%s, %.3f ms, nothing unusual: ", pt->calls,
                pt->calls == 1 ? "" : "s", cgi_ms(pt->total_ns));
    }
    /* The program by its name, not its path: the line is short. */
    const char *cmd0 = r->h.command, *slash = cmd0;
    size_t first = strcspn(cmd0, " ");
    for (size_t i = 0; i < first && i < sizeof r->h.command && cmd0[i]; i++)
        if (cmd0[i] == '/') slash = cmd0 + i + 1;
    if (c) cgi_text_str(c, slash, sizeof r->h.command - (size_t)(slash - cmd0));
    e = (h ? fclose(h) : -1) | (c ? fclose(c) : -1);
    if (!e) {
        size_t room = hlen + 8 < (size_t)width ? (size_t)width - hlen : 8, keep = clen;
        if (clen > room) { /* cut before a character, with "..." */
            keep = room - 3;
            while (keep && ((unsigned char)cmd[keep] & 0xc0) == 0x80)
                keep--;
        }
        fprintf(out, "%cu+%s%.*s%s\n", CGI_FOLD_MARK, head, (int)keep, cmd, keep < clen ? "..." : "");
    }
    free(head), free(cmd);
    return e ? ENOMEM : 0;
}

/* One process's section (one with calls). At a width, a process without
 * a rank that did nothing unusual may fold into one line, and a rank's
 * table that says nothing of the rank alone into one line (spool marks). */
int cgi_text_process(FILE *out, const cgi_proc_view *p, const cgi_totals *pt, int width, unsigned *said)
{
    const cgi_stats_region *r = p->region;
    size_t n;
    cgi_trow *rows = cgi_rows_of_process(r, &n);
    if (!rows) return ENOMEM;
    cgi_rows_sort(rows, n);
    int e, ranked = (r->h.rank_set & CGI_RANK_SET) != 0, matters = !width || cgi_proc_matters(p, pt, rows, n);
    if (width && !ranked && !matters)
        e = cgi_text_unranked(out, p, pt, rows, n, width, said);
    else {
        int plain = !width || !ranked;
        for (size_t i = 0; i < n && !plain; i++)
            plain = cgi_row_matters(&rows[i]);
        e = cgi_text_section(out, p, pt, rows, n, width, said, plain ? 0 : 'r');
    }
    free(rows);
    return e;
}

int cgi_text_tables(FILE *out, const cgi_report_writer *w)
{
    if (w->nproc > 1) {
        /* Several processes (a tree, or reports merged from several files):
         * one more table, each entry point's counts over all of them. */
        fprintf(out, "callguard: all %zu processes", w->nproc);
        if (w->nhosts > 1 || (w->nhosts == 1 && w->hosts[0][0]))
            fprintf(out, " on %zu host%s", w->nhosts, w->nhosts == 1 ? "" : "s");
        fputs(":\n", out);
        size_t n;
        cgi_trow *rows = cgi_rows_of_writer(w, &n);
        if (!rows) return ENOMEM;
        cgi_table_write(out, rows, n, w->width, NULL);
        free(rows);
    }
    return cgi_text_across_ranks(out, w);
}

void cgi_text_totals(FILE *out, const cgi_report_writer *w, size_t lost)
{
    const cgi_totals all = w->all;
    size_t nproc = w->nproc;
    /* Two lines, each within the width; the second says what the times sum. */
    /* "states": results that report a state (ZE_RESULT_NOT_READY), not a failure. */
    fprintf(out,
            CGI_OUT_TEXT_HEAD "%zu process%s, %" PRIu64 " call%s (%" PRIu64 " nested, %" PRIu64 " failed, %" PRIu64
                              " returned a state such as "
                              "NOT_READY)\n",
            nproc, nproc == 1 ? "" : "es", all.calls, all.calls == 1 ? "" : "s", all.nested, all.errors, all.states);
    fprintf(out,
            CGI_OUT_TEXT_HEAD "%.3f ms in the driver (summed over threads), %.3f" CGI_OUT_TEXT_TOTALS "%" PRIu64
                              " stall%s\n",
            cgi_ms(all.total_ns), cgi_ms(all.lock_wait_ns), all.stalls, all.stalls == 1 ? "" : "s");
    if (lost)
        fprintf(out,
                "callguard: %zu more process%s of the run left no statistics (its storage was full, read-only or "
                "removed, or it was not guarded: %s calls are not counted)\n",
                lost, lost == 1 ? "" : "es", lost == 1 ? "its" : "their");
}
