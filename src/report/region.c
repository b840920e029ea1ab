/* What both formats of a report read from a statistics region: its totals,
 * its result codes by name, its stalls worst first, its late calls slowest
 * first, its calls in flight. */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void cgi_codes_add(cgi_code_list *l, const cgi_stats_record *rec, size_t cap)
{
    l->errors += cgi_ctr_errors(&rec->c);
    l->states += cgi_ctr_states(&rec->c);
    for (unsigned i = 0; i < CGI_STATS_MAX_CODES; i++) {
        const cgi_code *k = &rec->code[i];
        uint32_t set = atomic_load(&k->set);
        uint64_t n = cgi_code_count(rec, i);
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
void cgi_codes_other(const cgi_code_list *l, uint64_t *errors, uint64_t *states)
{
    uint64_t e = 0, st = 0;
    for (size_t x = 0; x < l->n; x++)
        *(l->v[x].state ? &st : &e) += l->v[x].count;
    *errors = l->errors > e ? l->errors - e : 0;
    *states = l->states > st ? l->states - st : 0;
}

cgi_totals cgi_proc_totals(const cgi_stats_region *r)
{
    cgi_totals t = {0};
    for (uint32_t i = 0; i < cgi_nrec(r); i++)
        cgi_add(&t, &r->r[i].c);
    return t;
}

void cgi_exit_of(const cgi_proc_view *p, int *state, int *status)
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
size_t cgi_stalls_worst_first(const cgi_stats_region *r, const cgi_stall **v)
{
    size_t n = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_STALLS; i++)
        if (atomic_load(&r->stall[i].valid)) v[n++] = &r->stall[i];
    qsort(v, n, sizeof *v, cgi_by_worst);
    return n;
}

static int cgi_by_slowest(const void *a, const void *b)
{
    const cgi_late_call *x = *(const cgi_late_call *const *)a, *y = *(const cgi_late_call *const *)b;
    return x->ns != y->ns ? (x->ns < y->ns ? 1 : -1) : (x->ended_ns > y->ended_ns) - (x->ended_ns < y->ended_ns);
}

size_t cgi_late_slowest_first(const cgi_stats_region *r, const cgi_late_call **v)
{
    size_t n = 0;
    for (unsigned i = 0; i < CGI_LATE_MAX; i++)
        if (atomic_load(&r->late.call[i].valid)) v[n++] = &r->late.call[i];
    qsort(v, n, sizeof *v, cgi_by_slowest);
    return n;
}

uint64_t cgi_late_dropped(const cgi_stats_region *r, size_t kept)
{
    uint64_t n = atomic_load(&r->late.count);
    return n > kept ? n - kept : 0;
}

int cgi_in_flight(const cgi_slot *slot) { return atomic_load(&slot->tid) > 0 && atomic_load(&slot->counters) != NULL; }

int cgi_waiting(const cgi_slot *slot) { return atomic_load(&slot->waiting) != 0; }

/* The record a slot's call counts into; NULL when it is not one of them.
 * The slot holds an address in the process that wrote it (h.base). */
const cgi_stats_record *cgi_slot_record(const cgi_stats_region *r, const cgi_slot *slot)
{
    int64_t k = cgi_record_at(r, atomic_load(&slot->counters));
    return k >= 0 ? &r->r[k] : NULL;
}

uint64_t cgi_entered_ns(const cgi_stats_region *r, const cgi_slot *slot)
{
    uint64_t t = atomic_load(&slot->entered);
    return t < r->h.tick0 ? 0 : (uint64_t)(((unsigned __int128)(t - r->h.tick0) * atomic_load(&r->h.tick_mult)) >> 32);
}

/* What the hang page says of a slot's call in flight: the page's call on
 * the same thread and entry point, while the page is whole and its calls
 * had not returned at the watchdog's last look (a JSON report read back
 * keeps no call numbers: the thread and the entry point name the call).
 * NULL when the page does not have it. */
const cgi_hang_call *cgi_hang_of_slot(const cgi_stats_region *r, const cgi_slot *slot)
{
    const cgi_hang_page *pg = &r->hang;
    const cgi_stats_record *rec = cgi_slot_record(r, slot);
    if (!rec || !atomic_load(&pg->reports) || (atomic_load(&pg->gen) & 1) || pg->over) return NULL;
    for (uint32_t i = 0; i < pg->ncalls && i < CGI_HANG_MAX_CALLS; i++)
        if (pg->call[i].tid == atomic_load(&slot->tid) && strcmp(pg->call[i].name, rec->name) == 0 &&
            strcmp(pg->call[i].api, rec->api) == 0)
            return &pg->call[i];
    return NULL;
}
