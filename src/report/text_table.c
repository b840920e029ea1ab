/* The text report's sections, for people: one per process (what went
 * wrong first, then the table of its entry points), the combined table of
 * several, the view across ranks, and the totals line. The summary before
 * them and the advice after are summary.c's; the tables are table.c's. */
#define _GNU_SOURCE
#include "internal.h"

#include "../common/trace_file.h"
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
        fprintf(out, "  %lu more quirk%s matched, not kept here (a process keeps %d)\n", (unsigned long)dropped,
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
            fprintf(out, "\" %s %s %s, called %.3f ms after start",
                    cgi_waiting(slot) ? "waiting for the lock of" : "inside", rec ? rec->api : "?",
                    rec ? rec->name : "?", cgi_ms(cgi_entered_ns(r, slot)));
            cgi_text_hang_tail(out, cgi_hang_of_slot(r, slot));
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
    fprintf(out, "  hang reported %lu time%s (CALLGUARD_HANG_MS=%lu), the last %.3f ms after start-up%s%s:\n",
            (unsigned long)reports, reports == 1 ? "" : "s", (unsigned long)(pg->hang_ns / 1000000u), cgi_ms(pg->at_ns),
            shown, pg->over ? " (those calls returned later)" : "");
    for (uint32_t i = 0; i < pg->ncalls && i < CGI_HANG_MAX_CALLS; i++) {
        const cgi_hang_call *e = &pg->call[i];
        fprintf(out, "    tid %d ", e->tid);
        CGI_TEXT_FIELD(out, e->thread);
        fputs(": ", out);
        CGI_TEXT_FIELD(out, e->api);
        fputc(' ', out);
        CGI_TEXT_FIELD(out, e->name);
        fprintf(out, ", %lu ms", (unsigned long)(e->age_ns / 1000000u));
        if (e->waiting) {
            fputs(", waits for lock ", out);
            cgi_text_str(out, e->domain[0] ? e->domain : "(a handle lock)", sizeof e->domain);
            if (e->holder_tid) fprintf(out, " held by tid %d", e->holder_tid);
        }
        if (e->loader) fputs(", waits for the dynamic loader's lock (glibc)", out);
        cgi_text_hang_tail(out, e);
        fputc('\n', out);
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
    if (r->hang.hang_ns) fprintf(out, " (%lu ms)", (unsigned long)(r->hang.hang_ns / 1000000u));
    fputs(n > 1 ? ", the slowest first:\n" : ":\n", out);
    for (size_t i = 0; i < show; i++) {
        const cgi_hang_call *e = &v[i]->call;
        fputs("    ", out);
        CGI_TEXT_FIELD(out, e->api);
        fputc(' ', out);
        CGI_TEXT_FIELD(out, e->name);
        fprintf(out, " %lu ms, thread %d \"", (unsigned long)((v[i]->ns + 500000u) / 1000000u), e->tid);
        CGI_TEXT_FIELD(out, e->thread);
        fputc('"', out);
        cgi_text_hang_tail(out, e);
        fputc('\n', out);
    }
    if (show < n)
        fprintf(out, "    %zu more kept, %lu ms at most each (--all lists them)\n", n - show,
                (unsigned long)((v[show]->ns + 500000u) / 1000000u));
    if (more)
        fprintf(out, "    %lu faster one%s not kept (a process keeps %d)\n", (unsigned long)more, more == 1 ? "" : "s",
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

/* One process's section (one with calls). */
int cgi_text_process(FILE *out, const cgi_proc_view *p, const cgi_totals *pt, int width, unsigned *said)
{
    const cgi_stats_region *r = p->region;
    int state, status;
    cgi_exit_of(p, &state, &status);
    cgi_text_head(out, p, state, status);
    cgi_text_violations(out, r);
    cgi_text_quirks(out, r);
    cgi_text_in_flight(out, r, state, status);
    cgi_text_hang(out, r);
    cgi_text_stalls(out, r, pt->stalls, said);
    size_t n;
    cgi_trow *rows = cgi_rows_of_process(r, &n);
    if (!rows) return ENOMEM;
    /* How the times were taken: docs/report.md, "Sampled times". */
    cgi_table_write(out, rows, n, width, atomic_load(&r->h.timing) == CGI_TIMING_EXACT ? "exact" : "sampled");
    free(rows);
    /* After the table, whose rows they detail: the calls that took long and returned. */
    cgi_text_late(out, r, width);
    if (p->have_trace)
        fprintf(out, "  timeline: %lu events kept, %lu dropped", (unsigned long)p->trace_events,
                (unsigned long)p->trace_dropped);
    if (p->have_trace && p->trace_dropped)
        fprintf(out, " (each thread keeps its last %u calls; threads past the first %u keep none)",
                CGI_TRACE_EVENTS - 1, CGI_TRACE_MAX_THREADS);
    if (p->have_trace) fputc('\n', out);
    return 0;
}

/* ---- across ranks (report_ranks.h) ---- */

typedef struct cgi_text_ranks_arg {
    const cgi_report_writer *w;
    FILE *out;
} cgi_text_ranks_arg;

/* "RANK@HOST", cut to fit cap. */
static const char *cgi_text_where(char *buf, size_t cap, const cgi_rank_where *at)
{
    snprintf(buf, cap, "%u@%s", at->rank, at->host);
    return buf;
}

/* A site's peaks and worst stall, under its row. */
static void cgi_text_rank_peaks(FILE *out, const cgi_rank_site *s, int indent)
{
    if (!s->peak_inside && !s->peak_waiting && !s->stall_ns) return;
    fprintf(out, "%*s", indent, "");
    const char *sep = "";
    if (s->peak_inside)
        fprintf(out, "peak %u thread%s inside at rank %u on %s", s->peak_inside, s->peak_inside == 1 ? "" : "s",
                s->peak_inside_at.rank, s->peak_inside_at.host),
            sep = "; ";
    if (s->peak_waiting)
        fprintf(out, "%speak %u waiting at rank %u on %s", sep, s->peak_waiting, s->peak_waiting_at.rank,
                s->peak_waiting_at.host),
            sep = "; ";
    if (s->stall_ns)
        fprintf(out, "%sworst stall %.3f ms at rank %u on %s", sep, cgi_ms(s->stall_ns), s->stall_at.rank,
                s->stall_at.host);
    fputc('\n', out);
}

static void cgi_text_rank_site(const cgi_rank_site *s, void *arg)
{
    const cgi_text_ranks_arg *a = arg;
    const cgi_report_writer *w = a->w;
    FILE *out = a->out;
    const cgi_row *row = cgi_row_at(w, s->row);
    const cgi_rank_spread *c = &s->calls_per_rank, *t = &s->ns_per_rank;
    char cat[96], tat[96];
    if (w->width) {
        /* Two lines an entry point, each within the width. */
        fprintf(out, "  %s: %u ranks, calls per rank: min %lu, median %lu, max %lu at %s\n", CGI_ROW_NAME(row),
                s->ranks, (unsigned long)c->min, (unsigned long)c->median, (unsigned long)c->max,
                cgi_text_where(cat, sizeof cat, &c->max_at));
        fprintf(out, "      ms per rank: min %.3f, median %.3f, max %.3f at %s\n", cgi_ms(t->min), cgi_ms(t->median),
                cgi_ms(t->max), cgi_text_where(tat, sizeof tat, &t->max_at));
        cgi_text_rank_peaks(out, s, 6);
        return;
    }
    int apiw = w->apiw > 4 ? w->apiw : 4;
    fprintf(out, "  %-*s %-36s %6u %10lu %10lu %10lu %10lu %-16s %11.3f %10.3f %10.3f %10.3f %s\n", apiw, row->api,
            CGI_ROW_NAME(row), s->ranks, (unsigned long)s->calls, (unsigned long)c->min, (unsigned long)c->median,
            (unsigned long)c->max, cgi_text_where(cat, sizeof cat, &c->max_at), cgi_ms(s->total_ns), cgi_ms(t->min),
            cgi_ms(t->median), cgi_ms(t->max), cgi_text_where(tat, sizeof tat, &t->max_at));
    cgi_text_rank_peaks(out, s, apiw + 5);
}

/* Processes of two ranks or more: each entry point over the ranks. */
static void cgi_text_across_ranks(FILE *out, const cgi_report_writer *w)
{
    size_t ranks, hosts, unranked;
    cgi_ranks_counts(w->ranks, &ranks, &hosts, &unranked);
    if (ranks < 2) return;
    int apiw = w->apiw > 4 ? w->apiw : 4;
    fprintf(out, "callguard: across %zu ranks on %zu host%s", ranks, hosts, hosts == 1 ? "" : "s");
    if (unranked) fprintf(out, " (%zu process%s without a rank left out)", unranked, unranked == 1 ? "" : "es");
    if (w->width)
        return (void)fputs(":\n", out), cgi_ranks_each(w->ranks, cgi_text_rank_site, &(cgi_text_ranks_arg){w, out});
    fprintf(out, "; per rank: min, median, max, where the max was (rank@host):\n");
    fprintf(out, "  %-*s %-36s %6s %10s %10s %10s %10s %-16s %11s %10s %10s %10s %s\n", apiw, "api", "entry point",
            "ranks", "calls", "min", "median", "max", "max at", "total ms", "min ms", "median ms", "max ms", "max at");
    cgi_text_ranks_arg a = {w, out};
    cgi_ranks_each(w->ranks, cgi_text_rank_site, &a);
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
    cgi_text_across_ranks(out, w);
    return 0;
}

void cgi_text_totals(FILE *out, const cgi_report_writer *w, size_t lost)
{
    const cgi_totals all = w->all;
    size_t nproc = w->nproc;
    /* Two lines, each within the width; the second says what the times sum. */
    fprintf(out, CGI_OUT_TEXT_HEAD "%zu process%s, %lu calls (%lu nested, %lu errors, %lu states)\n", nproc,
            nproc == 1 ? "" : "es", (unsigned long)all.calls, (unsigned long)all.nested, (unsigned long)all.errors,
            (unsigned long)all.states);
    fprintf(out,
            CGI_OUT_TEXT_HEAD "%.3f ms in the driver (summed over threads), %.3f" CGI_OUT_TEXT_TOTALS "%lu stalls\n",
            cgi_ms(all.total_ns), cgi_ms(all.lock_wait_ns), (unsigned long)all.stalls);
    if (lost)
        fprintf(out,
                "callguard: %zu more process%s of the run left no statistics (its storage was full, read-only or "
                "removed, or it was not guarded: %s calls are not counted)\n",
                lost, lost == 1 ? "" : "es", lost == 1 ? "its" : "their");
}
