/* The text report leads with the answer: a summary before any table, the
 * run in one line and then only what needs attention, most costly first,
 * each in one line with its figure and, where there is one, the fix as a
 * command (docs/report.md, "The summary"). And the advice after the
 * tables: in full where a known bug affects this run, one line for the
 * bugs of other drivers (every piece in full: callguard report --advice).
 * What the summary says of processes is gathered as they are added, in a
 * few hundred bytes (cgi_summary), so a report of any size has one. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Lines of the summary, its first included. */
#define CGI_SUMMARY_LINES 8

void cgi_summary_add(cgi_summary *s, const cgi_proc_view *p)
{
    const cgi_stats_region *r = p->region;
    int state, status;
    cgi_exit_of(p, &state, &status);
    int ok = state == CGI_PROC_EXITED && status == 0;
    *(ok                           ? &s->exited0
      : state == CGI_PROC_EXITED   ? &s->exited
      : state == CGI_PROC_SIGNALED ? &s->signaled
      : state == CGI_PROC_EXECED   ? &s->execed
                                   : &s->unknown) += 1;
    if (!ok && state != CGI_PROC_EXECED && !s->odd_pid)
        s->odd_pid = r->h.pid, s->odd_state = state, s->odd_status = status;
    unsigned inside = 0;
    const cgi_stats_record *site = NULL;
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++)
        if (cgi_in_flight(&r->slot[i])) {
            if (!site) site = cgi_slot_record(r, &r->slot[i]);
            inside++;
        }
    if (inside && !s->died_inside++) {
        s->died_pid = r->h.pid, s->died_threads = inside;
        snprintf(s->died_site, sizeof s->died_site, "%s", site ? site->name : "an unknown entry point");
    }
    const cgi_hang_page *pg = &r->hang;
    if (atomic_load(&pg->reports) && pg->asked && !(atomic_load(&pg->gen) & 1) && pg->ncalls && !s->hung++)
        s->hang_pid = r->h.pid, s->hang_call = pg->call[0];
    for (unsigned i = 0; i < CGI_STATS_MAX_VIOLATIONS; i++) {
        const cgi_violation *v = &r->violation[i];
        if (!atomic_load(&v->valid)) continue;
        if (!s->viol.name[0]) s->viol = *v;
        s->violations += atomic_load(&v->count);
    }
    s->violations += atomic_load(&r->h.violations_dropped);
    const cgi_stall *v[CGI_STATS_MAX_STALLS];
    size_t n = cgi_stalls_worst_first(r, v);
    for (size_t i = 0; i < n; i++) {
        int k = cgi_stall_kind(v[i]);
        s->stall_n[k]++, s->stall_ns[k] += v[i]->ns;
        if (v[i]->ns > s->stall[k].ns) s->stall[k] = *v[i];
    }
}

/* ---- the summary's lines --------------------------------------------------------- */

/* One line that needs attention: its kind first (what is wrong before
 * what costs time, failed calls last), then its cost. */
typedef struct cgi_note {
    int kind;
    uint64_t cost;
    char *text; /* its line(s), each ending in '\n' */
} cgi_note;

typedef struct cgi_notes {
    cgi_note v[16];
    size_t n;
    int oom;
} cgi_notes;

static void cgi_note_add(cgi_notes *ns, int kind, uint64_t cost, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void cgi_note_add(cgi_notes *ns, int kind, uint64_t cost, const char *fmt, ...)
{
    if (ns->n == sizeof ns->v / sizeof *ns->v) return;
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0) ns->oom = 1, text = NULL;
    va_end(ap);
    if (text) ns->v[ns->n++] = (cgi_note){kind, cost, text};
}

static int cgi_by_cost(const void *pa, const void *pb)
{
    const cgi_note *a = pa, *b = pb;
    if (a->kind != b->kind) return a->kind - b->kind;
    return a->cost != b->cost ? (a->cost < b->cost ? 1 : -1) : 0;
}

/* The first line: the processes, ranks, hosts, how they ended (the wall
 * time is not known: no clock is read at the end). */
static void cgi_summary_head(FILE *out, const cgi_report_writer *w)
{
    const cgi_summary *s = &w->sum;
    char how[96], sig[32], line[400];
    if (!w->nproc) {
        /* No process made a guarded call: say how the run ended (the first
         * process that failed, else the last to end: the program) and what
         * to check, not "0 processes". */
        const cg_proc_exit *e = w->nexits ? &w->exits[w->nexits - 1] : NULL;
        for (size_t i = 0; i < w->nexits && e && !e->signaled && !e->status; i++)
            if (w->exits[i].signaled || w->exits[i].status) e = &w->exits[i];
        if (e && e->signaled)
            cgi_text_signal(e->status, sig, sizeof sig), snprintf(how, sizeof how, "was killed by %s", sig);
        else if (e)
            snprintf(how, sizeof how, "exited with status %d", e->status);
        /* Its calls may all have been to entry points its policy leaves uncounted: then say so, not "guarded". */
        const cgi_not_counted *nc = &w->not_counted;
        const char *what = nc->processes ? "counted" : "guarded";
        if (nc->processes && e && !e->signaled && !e->status) e = NULL; /* ended well: the policy is the why */
        if (!e)
            fprintf(out, "callguard: no process made a %s driver call\n", what);
        else if (w->nexits == 1)
            fprintf(out, "callguard: the program %s before any %s driver call\n", how, what);
        else
            fprintf(out, "callguard: none of %zu processes made a %s driver call (pid %d %s)\n", w->nexits, what,
                    e->pid, how);
        if (nc->processes) {
            int n = snprintf(line, sizeof line,
                             "  %s called %" PRIu64 " entry point%s %s policy leaves uncounted (count = no):",
                             nc->processes == 1 ? "it" : "they", nc->entry_points, nc->entry_points == 1 ? "" : "s",
                             nc->processes == 1 ? "its" : "their");
            for (size_t i = 0; i < nc->nnames && n > 0 && (size_t)n < sizeof line; i++)
                n += snprintf(line + n, sizeof line - (size_t)n, "%s %s", i ? "," : "", nc->names[i]);
            if (n > 0 && (size_t)n < sizeof line && nc->entry_points > nc->nnames)
                n += snprintf(line + n, sizeof line - (size_t)n, ", ...");
            cgi_text_fit(out, line, n > 0 && (size_t)n < sizeof line ? (size_t)n : strlen(line), w->width);
            fputs("  a policy file's count = yes counts them (docs/configuration.md)\n", out);
            return;
        }
        fputs("  check that it calls an API of a chosen layer (callguard list) and that nothing\n"
              "  cleared LD_PRELOAD on the way (a setuid program, a launcher that sets the environment)\n",
              out);
        return;
    }
    if (s->odd_state == CGI_PROC_SIGNALED)
        cgi_text_signal(s->odd_status, sig, sizeof sig), snprintf(how, sizeof how, "killed by %s", sig);
    else if (s->odd_state == CGI_PROC_EXITED)
        snprintf(how, sizeof how, "exit %d", s->odd_status);
    else
        snprintf(how, sizeof how, "ended without exit handlers");
    size_t odd = w->nproc - s->exited0 - s->execed, ranks, hosts, unranked;
    cgi_ranks_counts(w->ranks, &ranks, &hosts, &unranked);
    int len = snprintf(line, sizeof line, "callguard: %zu process%s", w->nproc, w->nproc == 1 ? "" : "es");
#define CGI_HEAD(...) (len += snprintf(line + len, sizeof line - (size_t)len, __VA_ARGS__))
    if (ranks) CGI_HEAD(", %zu rank%s", ranks, ranks == 1 ? "" : "s");
    if (w->nhosts > 1) CGI_HEAD(" on %zu hosts", w->nhosts);
    if (w->nproc == 1)
        CGI_HEAD(", %s", odd ? how : s->execed ? "replaced by exec" : "exit 0");
    else if (!odd)
        CGI_HEAD(", all exit 0");
    else if (odd == 1)
        CGI_HEAD(", pid %d %s", s->odd_pid, how);
    else
        CGI_HEAD(", %zu not exit 0 (the first, pid %d: %s)", odd, s->odd_pid, how);
#undef CGI_HEAD
    fputs(line, out);
    fputc('\n', out);
}

/* The second line: the calls, their time in the driver and the entry
 * points that took most of it, as many as fit the line (they are the
 * first rows of the table below). */
static void cgi_summary_figures(FILE *out, const cgi_report_writer *w)
{
    const cgi_row *top[3] = {NULL, NULL, NULL};
    for (size_t x = 0; x < w->nrow; x++) {
        const cgi_row *row = cgi_row_at(w, x);
        for (int k = 0; k < 3; k++)
            if (!top[k] || row->t.total_ns > top[k]->t.total_ns) {
                memmove(&top[k + 1], &top[k], (size_t)(2 - k) * sizeof *top);
                top[k] = row;
                break;
            }
    }
    uint64_t total = w->all.total_ns;
    char line[600], item[160];
    int len = snprintf(line, sizeof line, "  %" PRIu64 " call%s, %.3f ms in the driver (summed over threads)",
                       w->all.calls, w->all.calls == 1 ? "" : "s", cgi_ms(total));
    int room = w->width ? w->width : (int)sizeof line - 1;
    /* Under a millisecond in all is nothing to look at. */
    for (int k = 0; k < 3 && top[k] && total >= 1000000; k++) {
        double pct = 100.0 * (double)top[k]->t.total_ns / (double)total;
        int n = snprintf(item, sizeof item, "%s%s %.1f%%", k ? ", " : ": ", CGI_ROW_NAME(top[k]), pct);
        if ((k && pct < 1.0) || len + n > room) break;
        len += snprintf(line + len, sizeof line - (size_t)len, "%s", item);
    }
    fprintf(out, "%s\n", line);
}

/* The time waiting for locks, and where most of it was. */
static void cgi_summary_locks(cgi_notes *ns, const cgi_report_writer *w)
{
    const cgi_row *waited = NULL;
    for (size_t x = 0; x < w->nrow; x++) {
        const cgi_row *row = cgi_row_at(w, x);
        if (row->t.lock_wait_ns && (!waited || row->t.lock_wait_ns > waited->t.lock_wait_ns)) waited = row;
    }
    if (!waited) return;
    char at[CGI_NAME_MAX + 40], most[48] = "";
    if (waited->t.lock_wait_ns == w->all.lock_wait_ns)
        snprintf(at, sizeof at, "all at %s", CGI_ROW_NAME(waited));
    else
        snprintf(at, sizeof at, "%.3f ms at %s", cgi_ms(waited->t.lock_wait_ns), CGI_ROW_NAME(waited));
    if (waited->peak_waiting) snprintf(most, sizeof most, ", up to %u threads at once", waited->peak_waiting);
    cgi_note_add(ns, 1, w->all.lock_wait_ns, "  %.3f ms waiting for locks, %s%s\n", cgi_ms(w->all.lock_wait_ns), at,
                 most);
}

/* One line for the stalls of a kind: how many, their time, the worst one
 * and where, and how to leave the runtime. */
static void cgi_summary_stall_line(cgi_notes *ns, uint64_t n, uint64_t t, const cgi_stall *st, const char *what)
{
    char where[sizeof st->py_file + 64] = "", waiting[48] = "";
    if (st->ns && st->py_file[0]) {
        const char *base = strrchr(st->py_file, '/');
        snprintf(where, sizeof where, ", %.*s:%d", (int)sizeof st->py_file, base ? base + 1 : st->py_file, st->py_line);
    }
    if (st->waiters > 0) snprintf(waiting, sizeof waiting, ", %d waiting", st->waiters);
    int known = !st->ns || !st->runtime[0] || strcmp(st->runtime, "cpython") == 0 || strcmp(st->runtime, "julia") == 0;
    const char *fix = known ? ": callguard run --release-runtime" : "; what to do: below";
    if (st->ns)
        cgi_note_add(ns, 1, t, "  %" PRIu64 " stall%s held the runtime %.3f ms%s (worst: %.*s%s%s)%s\n", n,
                     n == 1 ? "" : "s", cgi_ms(t), what, (int)sizeof st->name, st->name, where, waiting, fix);
    else
        cgi_note_add(ns, 1, t, "  %" PRIu64 " stall%s held the runtime %.3f ms%s%s\n", n, n == 1 ? "" : "s", cgi_ms(t),
                     what, fix);
}

/* Calls that held the runtime: only those that blocked someone, and those
 * of which that is not known (the ones a process did not keep among them);
 * a stall no other thread waited for cost nothing, and is only listed in
 * its process's section. */
static void cgi_summary_stalls(cgi_notes *ns, const cgi_report_writer *w)
{
    const cgi_summary *s = &w->sum;
    if (!w->all.stalls) return;
    uint64_t kept = s->stall_n[0] + s->stall_n[1] + s->stall_n[2];
    uint64_t kept_ns = s->stall_ns[0] + s->stall_ns[1] + s->stall_ns[2];
    uint64_t unknown = s->stall_n[CGI_STALL_UNKNOWN], unknown_ns = s->stall_ns[CGI_STALL_UNKNOWN];
    if (w->all.stalls > kept) unknown += w->all.stalls - kept;
    if (w->all.stall_ns > kept_ns) unknown_ns += w->all.stall_ns - kept_ns;
    if (s->stall_n[CGI_STALL_BLOCKED])
        cgi_summary_stall_line(ns, s->stall_n[CGI_STALL_BLOCKED], s->stall_ns[CGI_STALL_BLOCKED],
                               &s->stall[CGI_STALL_BLOCKED], " while other threads waited");
    if (unknown)
        cgi_summary_stall_line(ns, unknown, unknown_ns, &s->stall[CGI_STALL_UNKNOWN],
                               ", whether others waited is not known");
}

/* Processes that ended inside calls, grouped by what they were doing, the
 * odd ones first: in a job stopped while it made no progress, the rank
 * out of step (status_group.c). One note, a line a group. */
static void cgi_summary_ended_groups(cgi_notes *ns, const cgi_report_writer *w)
{
    size_t n = w->nended, len = 0;
    char *text = NULL;
    cgi_status_grouping gr;
    FILE *f = cgi_status_grouped(w->ended, n, &gr) == 0 ? open_memstream(&text, &len) : NULL;
    if (f) {
        const size_t *order = gr.order, ng = gr.ng;
        const cgi_status_group *groups = gr.groups;
        fprintf(f, "  %zu processes ended inside calls%s:\n", n + w->ended_more, ng > 1 ? ", the odd ones first" : "");
        for (size_t g = 0; g < ng; g++) {
            const cgi_hang_call *c = &w->ended[order[groups[g].first]].call[0];
            fputs("    ", f);
            cgi_status_members(f, w->ended, order, &groups[g]);
            fprintf(f, ": %s ", c->waiting ? "waiting for the lock of" : "in");
            CGI_TEXT_FIELD(f, c->name);
            cgi_status_where(f, c);
            fprintf(f, ", %.1f s\n", (double)groups[g].oldest_ns / 1e9);
        }
        if (fclose(f) == 0 && text) cgi_note_add(ns, 0, 3, "%s", text);
    }
    free(text);
    cgi_status_grouping_free(&gr);
}

/* A collective some ranks made another number of times than the others:
 * the classic cause of a collective hang (one rank called it once more).
 * Said only of a job that ended with calls in flight: ranks of a job that
 * finished may well run collectives on communicators of their own. */
typedef struct cgi_odd_arg {
    cgi_notes *ns;
    const cgi_report_writer *w;
} cgi_odd_arg;

static void cgi_summary_odd_site(const cgi_rank_site *s, void *arg)
{
    const cgi_odd_arg *a = arg;
    const cgi_row *row = cgi_row_at(a->w, s->row);
    if (!row->collective || !s->nodd) return;
    char ranks[160] = "", counts[160] = "";
    size_t r = 0, c = 0;
    for (uint32_t k = 0; k < s->nodd && k < CGI_RANKS_ODD_KEPT; k++) {
        r += (size_t)snprintf(ranks + r, sizeof ranks - r, "%s%u", k ? ", " : "", s->odd[k].rank);
        c += (size_t)snprintf(counts + c, sizeof counts - c, "%s%" PRIu64, k ? ", " : "", s->odd_calls[k]);
    }
    const char *more = s->nodd > CGI_RANKS_ODD_KEPT ? " and more" : "";
    if (s->no_usual)
        cgi_note_add(a->ns, 0, 2,
                     "  ranks %s%s made %s %s calls, no count most ranks made (a collective: every rank makes it "
                     "alike)\n",
                     ranks, more, counts, CGI_ROW_NAME(row));
    else if (s->nodd == 1)
        cgi_note_add(a->ns, 0, 2,
                     "  rank %s made %s %s calls, the others %" PRIu64 " (a collective: every rank makes it alike)\n",
                     ranks, counts, CGI_ROW_NAME(row), s->usual_calls);
    else
        cgi_note_add(a->ns, 0, 2,
                     "  ranks %s%s made %s %s calls, most ranks %" PRIu64
                     " (a collective: every rank makes it alike)\n",
                     ranks, more, counts, CGI_ROW_NAME(row), s->usual_calls);
}

/* Processes that died in a call, hangs, thread-rule violations, lost processes. */
static void cgi_summary_wrong(cgi_notes *ns, const cgi_report_writer *w, size_t lost)
{
    const cgi_summary *s = &w->sum;
    cgi_odd_arg odd = {ns, w};
    if (w->nended) cgi_ranks_each(w->ranks, cgi_summary_odd_site, &odd);
    if (w->nended > 1)
        cgi_summary_ended_groups(ns, w);
    else if (s->died_inside)
        cgi_note_add(ns, 0, 3, "  pid %d ended with %u thread%s inside %s%s\n", s->died_pid, s->died_threads,
                     s->died_threads == 1 ? "" : "s", s->died_site,
                     s->died_inside > 1 ? " (and more processes inside calls: below)" : "");
    if (s->hung) {
        const cgi_hang_call *c = &s->hang_call;
        cgi_note_add(ns, 0, 2, "  hang reported: pid %d, thread %d in %.*s for %" PRIu64 " ms%s%s%s\n", s->hang_pid,
                     c->tid, (int)sizeof c->name, c->name, c->age_ns / 1000000u,
                     c->waiting ? ", waiting for its lock" : "", c->held == CGI_HELD_YES ? ", holding the runtime" : "",
                     s->hung > 1 ? " (more processes: below)" : "");
    }
    if (s->violations)
        cgi_note_add(ns, 0, 1,
                     "  %" PRIu64 " thread-rule violation%s, the first at %.*s: callguard run --serialize-handles\n",
                     s->violations, s->violations == 1 ? "" : "s", (int)sizeof s->viol.name, s->viol.name);
    if (lost)
        cgi_note_add(ns, 0, 0, "  %zu process%s left no statistics: %s calls are not counted\n", lost,
                     lost == 1 ? "" : "es", lost == 1 ? "its" : "their");
    uint64_t errors = 0;
    const cgi_row *most = NULL;
    for (size_t x = 0; x < w->nrow; x++) {
        const cgi_row *row = cgi_row_at(w, x);
        errors += row->t.errors;
        if (row->t.errors && (!most || row->t.errors > most->t.errors)) most = row;
    }
    if (most)
        cgi_note_add(ns, 2, errors, "  %" PRIu64 " call%s failed, %" PRIu64 " of them %s\n", errors,
                     errors == 1 ? "" : "s", most->t.errors, CGI_ROW_NAME(most));
}

/* ---- the advice ------------------------------------------------------------------- */

/* One piece of advice, as text (the quirk's view lasts only for the call). */
typedef struct cgi_tip {
    int affects, applied;
    char *fix; /* "--serialize ..."; NULL when applied, or for advice only (then `advice`) */
    char *advice;
    char *text; /* the piece in full: "callguard: advice: ..." lines */
    char *quirk, *entry;
    char api[CGI_API_NAME_MAX]; /* the quirk's */
    uint32_t inside;
} cgi_tip;

typedef struct cgi_tips {
    cgi_tip *v;
    size_t n, cap;
    int oom;
} cgi_tips;

/* The piece in full, as lines that start "callguard: advice:". */
static void cgi_tip_text(FILE *out, const cgi_advice *a)
{
    const cgi_row *row = a->row;
    const cgi_quirk_view *q = a->quirk;
    fputs("callguard: advice: ", out);
    cgi_text_str(out, CGI_ROW_NAME(row), CGI_NAME_MAX);
    if (a->applied) {
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
    fputs(")\n", out);
}

static void cgi_tip_add(const cgi_advice *a, void *arg)
{
    cgi_tips *ts = arg;
    if (ts->oom) return;
    if (ts->n == ts->cap) {
        size_t cap = ts->cap ? ts->cap * 2 : 8;
        cgi_tip *v = realloc(ts->v, cap * sizeof *v);
        if (!v) return (void)(ts->oom = 1);
        ts->v = v, ts->cap = cap;
    }
    cgi_tip *t = &ts->v[ts->n];
    *t = (cgi_tip){.affects = a->affects, .applied = a->applied, .inside = a->row->peak_inside};
    snprintf(t->api, sizeof t->api, "%s", a->quirk->api);
    size_t len;
    FILE *f = open_memstream(&t->text, &len);
    if (f) cgi_tip_text(f, a);
    int bad = !f || fclose(f) != 0;
    t->quirk = strdup(a->quirk->name), t->entry = strdup(CGI_ROW_NAME(a->row));
    if (a->quirk->advice)
        t->advice = strdup(a->quirk->advice);
    else if (!a->applied)
        t->fix = cgi_advice_fix(a->quirk);
    ts->n++;
    if (bad || !t->text || !t->quirk || !t->entry || (a->quirk->advice ? !t->advice : !a->applied && !t->fix))
        ts->oom = 1;
}

static void cgi_tips_free(cgi_tips *ts)
{
    for (size_t i = 0; i < ts->n; i++)
        free(ts->v[i].fix), free(ts->v[i].advice), free(ts->v[i].text), free(ts->v[i].quirk), free(ts->v[i].entry);
    free(ts->v);
}

/* 0, or ENOMEM (ts is freed then). */
static int cgi_tips_of(const cgi_report_writer *w, cgi_tips *ts)
{
    *ts = (cgi_tips){0};
    cgi_advice_each(w, cgi_tip_add, ts);
    if (!ts->oom) return 0;
    cgi_tips_free(ts);
    return ENOMEM;
}

static int cgi_same_fix(const cgi_tip *a, const cgi_tip *b)
{
    if (a->advice || b->advice) return a->advice && b->advice && strcmp(a->advice, b->advice) == 0;
    return a->fix && b->fix && strcmp(a->fix, b->fix) == 0;
}

/* What to do about a piece: its fix as a run, or its advice. */
static void cgi_tip_do(FILE *out, const cgi_tip *t, const char *indent)
{
    if (t->advice)
        fprintf(out, "%sdo: %s\n", indent, t->advice);
    else if (t->fix)
        fprintf(out, "%sfix: callguard run %s -- PROGRAM\n", indent, t->fix);
}

/* Whether an earlier piece of `which` (affects 1 and not applied; or any) had t's fix. */
static int cgi_fix_said(const cgi_tips *ts, size_t i, int only_affecting)
{
    for (size_t k = 0; k < i; k++)
        if ((!only_affecting || (ts->v[k].affects == 1 && !ts->v[k].applied)) && cgi_same_fix(&ts->v[k], &ts->v[i]))
            return 1;
    return 0;
}

/* The known bugs that affect this run and are not fixed, one note per fix. */
static void cgi_summary_advice(cgi_notes *ns, const cgi_tips *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        const cgi_tip *t = &ts->v[i];
        if (t->affects != 1 || t->applied || cgi_fix_said(ts, i, 1)) continue;
        char names[256] = "", entries[256] = "";
        size_t nq = 0;
        uint32_t inside = 0;
        for (size_t k = i; k < ts->n; k++) {
            const cgi_tip *o = &ts->v[k];
            if (o->affects != 1 || o->applied || !cgi_same_fix(o, t)) continue;
            if (!strstr(names, o->quirk))
                nq++, snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "",
                               o->quirk);
            if (!strstr(entries, o->entry))
                snprintf(entries + strlen(entries), sizeof entries - strlen(entries), "%s%s", entries[0] ? ", " : "",
                         o->entry);
            if (o->inside > inside) inside = o->inside;
        }
        if (t->advice)
            cgi_note_add(ns, 0, 4,
                         "  known bug%s %s of this run's driver: %s had %u threads inside at once\n"
                         "    do: %s\n",
                         nq == 1 ? "" : "s", names, entries, inside, t->advice);
        else
            cgi_note_add(ns, 0, 4,
                         "  known bug%s %s of this run's driver: %s had %u threads inside at once\n"
                         "    fix: callguard run %s -- PROGRAM\n",
                         nq == 1 ? "" : "s", names, entries, inside, t->fix);
    }
}

int cgi_summary_write(FILE *out, const cgi_report_writer *w, size_t lost)
{
    cgi_tips ts;
    if (cgi_tips_of(w, &ts) != 0) return ENOMEM;
    cgi_notes ns = {.n = 0};
    cgi_summary_wrong(&ns, w, lost);
    cgi_summary_advice(&ns, &ts);
    cgi_summary_locks(&ns, w);
    cgi_summary_stalls(&ns, w);
    cgi_tips_free(&ts);
    qsort(ns.v, ns.n, sizeof *ns.v, cgi_by_cost);
    cgi_summary_head(out, w);
    cgi_summary_figures(out, w);
    int lines = 2;
    if (w->stuck_line) {
        fputs("  stuck: ", out);
        cgi_text_str(out, w->stuck_line, 300);
        fputc('\n', out), lines++;
    }
    for (size_t i = 0; i < ns.n; i++) {
        int n = 0;
        for (const char *c = ns.v[i].text; *c; c++)
            n += *c == '\n';
        if (lines + n > CGI_SUMMARY_LINES - (i + 1 < ns.n)) {
            fprintf(out, "  and %zu more below\n", ns.n - i);
            break;
        }
        fputs(ns.v[i].text, out);
        lines += n;
    }
    for (size_t i = 0; i < ns.n; i++)
        free(ns.v[i].text);
    fputc('\n', out);
    return ns.oom ? ENOMEM : 0;
}

/* `callguard report --advice FILE...`, with the files this report was read
 * from where it was read from files. */
static void cgi_advice_command(FILE *out, const cgi_report_writer *w)
{
    if (!w->nsources) {
        fputs("save the report (--report FILE.json), then callguard report --advice FILE.json", out);
        return;
    }
    fputs("callguard report --advice", out);
    for (size_t i = 0; i < w->nsources && i < 4; i++) {
        fputc(' ', out);
        cgi_text_str(out, w->sources[i], 1024);
    }
    if (w->nsources > 4) fputs(" ...", out);
}

/* The pieces that do not affect this run (or may not), as one line. */
static void cgi_advice_others(FILE *out, const cgi_report_writer *w, const cgi_tips *ts)
{
    size_t other = 0, unknown = 0;
    for (size_t i = 0; i < ts->n; i++) {
        size_t k = 0;
        while (k < i && strcmp(ts->v[k].quirk, ts->v[i].quirk) != 0)
            k++;
        if (k < i || ts->v[i].affects == 1) continue; /* counted, or said in full */
        *(ts->v[i].affects == 0 ? &other : &unknown) += 1;
    }
    size_t n = other + unknown;
    if (!n) return;
    /* One thing said, whatever the number of bugs: the command on a line
     * of its own, since the file names may be long. */
    if (!unknown)
        fprintf(out,
                "callguard: %zu known bug%s of other drivers would break this call pattern (this run's were "
                "checked):\n",
                n, n == 1 ? "" : "s");
    else
        fprintf(out,
                "callguard: %zu known driver bug%s would break this call pattern, none seen in this run (%zu "
                "unchecked):\n",
                n, n == 1 ? "" : "s", unknown);
    fputs("  ", out);
    cgi_advice_command(out, w);
    fputc('\n', out);
}

/* Whether the piece affects this run, in words (every piece in full). */
static void cgi_tip_affects(FILE *out, const cgi_tip *t)
{
    if (t->affects == 1)
        fprintf(out, "  this run: affected: a process's %s driver matched %s%s\n", t->api, t->quirk,
                t->applied ? ", and the fix was applied" : "");
    else if (t->affects == 0)
        fprintf(out, "  this run: not affected: its %s drivers were checked and none matched\n", t->api);
    else
        fprintf(out,
                "  this run: not known: no process checked its %s drivers (none initialized %s, or the report "
                "is older than that record)\n",
                t->api, t->api);
}

int cgi_advice_text(FILE *out, const cgi_report_writer *w, int all)
{
    cgi_tips ts;
    if (cgi_tips_of(w, &ts) != 0) return ENOMEM;
    if (all && !ts.n)
        fputs("callguard: no advice: no entry point had several threads inside at once that a known bug "
              "serializes\n",
              out);
    /* Each piece once, grouped by fix; the fix once, after its last piece. */
    for (size_t i = 0; i < ts.n; i++) {
        const cgi_tip *t = &ts.v[i];
        int shown = all || t->affects == 1;
        if (!shown || ((t->fix || t->advice) && cgi_fix_said(&ts, i, !all))) continue;
        for (size_t k = i; k < ts.n; k++) {
            const cgi_tip *o = &ts.v[k];
            if (k != i && (!(all || o->affects == 1) || !cgi_same_fix(o, t))) continue;
            fputs(o->text, out);
            if (all) cgi_tip_affects(out, o);
        }
        cgi_tip_do(out, t, "  ");
    }
    if (!all) cgi_advice_others(out, w, &ts);
    cgi_tips_free(&ts);
    return 0;
}
