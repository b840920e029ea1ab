/* What processes are doing, for `callguard status` and the report of a
 * job that ended with calls in flight (internal.h, cgi_status_*): each
 * process taken from its region into a small summary (its calls in
 * flight, with what the hang page knows of them), and the processes
 * grouped by what they are doing, the odd ones first: in a job that
 * stopped making progress, the rank that does something else is the one
 * to look at. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* A call of a slot, as far as the slot alone says. */
static void cgi_status_from_slot(const cgi_stats_region *r, const cgi_slot *slot, cgi_hang_call *e)
{
    const cgi_stats_record *rec = cgi_slot_record(r, slot);
    memset(e, 0, sizeof *e);
    e->tid = atomic_load(&slot->tid);
    memcpy(e->thread, slot->thread, sizeof e->thread - 1);
    snprintf(e->api, sizeof e->api, "%s", rec ? rec->api : "?");
    snprintf(e->name, sizeof e->name, "%s", rec ? rec->name : "?");
    snprintf(e->domain, sizeof e->domain, "%s", rec ? rec->domain : "");
    e->waiting = cgi_waiting(slot);
    e->held = CGI_HELD_UNKNOWN;
    e->py_line = -1;
}

void cgi_status_take(const cgi_stats_region *r, uint64_t now_mono_ns, cgi_status_proc *p)
{
    memset(p, 0, sizeof *p);
    p->pid = r->h.pid;
    p->rank = r->h.rank_set & CGI_RANK_SET ? (int32_t)r->h.rank : -1;
    p->world_size = r->h.world_size;
    snprintf(p->host, sizeof p->host, "%s", r->h.host);
    snprintf(p->command, sizeof p->command, "%.*s", (int)sizeof p->command - 1, r->h.command);
    /* ns since the process's start-up, on its clock (the same host's); for
     * a process that ended (now_mono_ns 0), the watchdog's last look. */
    const cgi_hang_page *pg = &r->hang;
    uint64_t seen = atomic_load(&pg->seen_ns);
    uint64_t now = now_mono_ns > r->h.start_mono_ns && r->h.start_mono_ns ? now_mono_ns - r->h.start_mono_ns : 0;
    if (!now_mono_ns) now = seen;
    p->up_ns = now;
    for (uint32_t k = 0; k < cgi_nrec(r); k++)
        p->calls += cgi_ctr_calls(&r->r[k].c);
    p->watchdog_ago_ns = seen && now >= seen ? now - seen : UINT64_MAX;
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        const cgi_slot *slot = &r->slot[i];
        if (!cgi_in_flight(slot) || p->in_flight++ >= CGI_STATUS_MAX_CALLS) continue;
        cgi_hang_call *e = &p->call[p->ncalls++];
        const cgi_hang_call *known = cgi_hang_of_slot(r, slot);
        uint64_t entered = cgi_entered_ns(r, slot);
        if (known) {
            *e = *known;
            /* Its age then, and the time since the page was written. */
            e->age_ns = known->age_ns + (now > pg->at_ns ? now - pg->at_ns : 0);
        } else {
            cgi_status_from_slot(r, slot, e);
            e->age_ns = entered && now > entered ? now - entered : 0;
        }
    }
    for (unsigned i = 0; i < p->ncalls; i++) {
        int h;
        p->behind_quirk[i] = cgi_behind_quirk(r->quirk, CGI_STATS_MAX_QUIRKS, p->call, p->ncalls, i, &h);
        p->behind[i] = (int8_t)h;
    }
}

/* ---- grouping ------------------------------------------------------------------ */

/* What a process is doing, for grouping: its first call in flight (the
 * entry point and its Python line), or nothing. */
static int cgi_status_same(const cgi_status_proc *a, const cgi_status_proc *b)
{
    if (!a->ncalls || !b->ncalls) return !a->ncalls && !b->ncalls;
    const cgi_hang_call *x = &a->call[0], *y = &b->call[0];
    return strcmp(x->api, y->api) == 0 && strcmp(x->name, y->name) == 0 && x->waiting == y->waiting &&
           strcmp(x->py_file, y->py_file) == 0 && x->py_line == y->py_line;
}

static const cgi_status_proc *cgi_status_sorting;

/* Ranks in order, then pids (processes without a rank after those with). */
static int cgi_status_by_rank(const void *a, const void *b)
{
    const cgi_status_proc *x = &cgi_status_sorting[*(const size_t *)a], *y = &cgi_status_sorting[*(const size_t *)b];
    if ((x->rank < 0) != (y->rank < 0)) return x->rank < 0 ? 1 : -1;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Groups of one first (the odd ones out), then by size, smallest first. */
static int cgi_status_by_size(const void *a, const void *b)
{
    const cgi_status_group *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Fills order[] (the processes, grouped, groups odd ones first) and
 * groups[]; returns the number of groups. */
static size_t cgi_status_group_all(const cgi_status_proc *v, size_t n, size_t *order, cgi_status_group *groups)
{
    size_t *sorted = malloc((n ? n : 1) * sizeof *sorted), ng = 0, k = 0;
    if (!sorted) return 0;
    for (size_t i = 0; i < n; i++)
        sorted[i] = i;
    cgi_status_sorting = v;
    qsort(sorted, n, sizeof *sorted, cgi_status_by_rank);
    char *taken = calloc(n ? n : 1, 1);
    for (size_t i = 0; taken && i < n; i++) {
        if (taken[i]) continue;
        cgi_status_group *g = &groups[ng++];
        g->first = k, g->n = 0, g->oldest_ns = 0;
        for (size_t j = i; j < n; j++) {
            if (taken[j] || !cgi_status_same(&v[sorted[i]], &v[sorted[j]])) continue;
            taken[j] = 1, order[k++] = sorted[j], g->n++;
            const cgi_status_proc *p = &v[sorted[j]];
            if (p->ncalls && p->call[0].age_ns > g->oldest_ns) g->oldest_ns = p->call[0].age_ns;
        }
    }
    free(taken);
    free(sorted);
    qsort(groups, ng, sizeof *groups, cgi_status_by_size);
    return ng;
}

/* ---- text ---------------------------------------------------------------------- */

int cgi_status_grouped(const cgi_status_proc *v, size_t n, cgi_status_grouping *g)
{
    g->order = malloc((n ? n : 1) * sizeof *g->order);
    g->groups = malloc((n ? n : 1) * sizeof *g->groups);
    if (!g->order || !g->groups) {
        cgi_status_grouping_free(g);
        return -1;
    }
    g->ng = cgi_status_group_all(v, n, g->order, g->groups);
    return 0;
}

void cgi_status_grouping_free(cgi_status_grouping *g)
{
    free(g->order), free(g->groups);
    g->order = NULL, g->groups = NULL, g->ng = 0;
}

/* "ranks 0-1, 3", "pid 12", or "rank 0 and pid 12" for the members of a group: those with a rank by
 * rank, then those without (a launcher) by pid. */
void cgi_status_members(FILE *out, const cgi_status_proc *v, const size_t *order, const cgi_status_group *g)
{
    size_t ranked = 0, unranked = 0;
    for (size_t i = 0; i < g->n; i++)
        v[order[g->first + i]].rank < 0 ? unranked++ : ranked++;
    if (ranked) fprintf(out, "%s ", ranked == 1 ? "rank" : "ranks");
    int said = 0;
    for (size_t i = 0; i < g->n;) {
        int32_t lo = v[order[g->first + i]].rank, hi = lo;
        size_t j = i + 1;
        if (lo < 0) {
            i = j;
            continue;
        }
        while (j < g->n && v[order[g->first + j]].rank == hi + 1)
            hi = v[order[g->first + j++]].rank;
        fprintf(out, "%s%d", said++ ? ", " : "", (int)lo);
        if (hi > lo) fprintf(out, "%s%d", hi == lo + 1 ? ", " : "-", (int)hi);
        i = j;
    }
    if (!unranked) return;
    fprintf(out, "%s%s", ranked ? " and " : "", unranked == 1 ? "pid" : "pids");
    said = 0;
    for (size_t i = 0; i < g->n; i++)
        if (v[order[g->first + i]].rank < 0) fprintf(out, "%s %d", said++ ? "," : "", v[order[g->first + i]].pid);
}

void cgi_text_args(FILE *out, const cgi_hang_call *e)
{
    for (uint32_t i = 0; e && i < e->nargs && i < CG_WAIT_ARGS_MAX; i++) {
        fputc(' ', out);
        CGI_TEXT_FIELD(out, e->arg[i].name);
        fputc('=', out);
        CGI_TEXT_FIELD(out, e->arg[i].value);
    }
}

/* " at FILE:LINE in FUNCTION", and how it was read where that was not the
 * first way (" (read via /proc/self/mem)"), or nothing when not known. */
void cgi_status_where(FILE *out, const cgi_hang_call *e)
{
    if (!e->py_file[0]) return;
    fputs(" at ", out);
    CGI_TEXT_FIELD(out, e->py_file);
    fprintf(out, ":%d", e->py_line);
    if (e->py_func[0]) {
        fputs(" in ", out);
        CGI_TEXT_FIELD(out, e->py_func);
    }
    if (e->py_via == CGI_PY_VIA_PROC_MEM) fputs(" (read via /proc/self/mem)", out);
}

void cgi_text_behind(FILE *out, const cgi_hang_call *b, const cgi_hang_call *a, const char *quirk)
{
    fprintf(out, "      thread %d \"", b->tid);
    CGI_TEXT_FIELD(out, b->thread);
    fprintf(out, "\" waits behind thread %d \"", a->tid);
    CGI_TEXT_FIELD(out, a->thread);
    fputs("\"'s ", out);
    CGI_TEXT_FIELD(out, a->name);
    fputs(" on the same device: the driver holds the device's lock while it waits (", out);
    cgi_text_str(out, quirk, 64);
    fputs(")\n", out);
}
