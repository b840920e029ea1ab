/* The view of a job's entry points across its ranks: each entry point's
 * calls and time summed, their min, median and max over the ranks, and the
 * rank and host that had the max (one slow or busy rank, or node, shows as
 * a max far from the median), with the peaks and the worst stall where
 * they were.
 *
 * A median needs every rank's value, so this keeps one cell per entry point
 * a process with a rank called: 24 bytes each, the only part that grows
 * with ranks x entry points (docs/report.md states the bound). The cells
 * are appended as processes come, in any order, and sorted once at the
 * end; a rank's processes (a forked child, an exec'd image) add up there. */
#define _GNU_SOURCE
#include "report_ranks.h"

#include <stdlib.h>
#include <string.h>

typedef struct cgi_rank_cell {
    uint32_t row, ix; /* the writer's row; the rank's index in v->rank */
    uint64_t calls, ns;
} cgi_rank_cell;

/* Per row: the peaks and the worst stall of the processes with a rank,
 * and the rank index (+1, 0: none) that had each. */
typedef struct cgi_rank_row {
    uint32_t inside, inside_at, waiting, waiting_at, stall_at;
    uint64_t stall_ns;
    int members; /* compared among the ranks that have it (cgi_ranks_members_only) */
} cgi_rank_row;

struct cgi_ranks {
    cgi_rank_where *rank; /* by index, in first-seen order */
    size_t nrank, rankcap;
    uint32_t *ix; /* open addressing: rank number -> index + 1 (0: empty) */
    size_t ixcap; /* a power of two, at least twice nrank */
    cgi_rank_cell *cell;
    size_t ncell, cellcap;
    cgi_rank_row *row;
    size_t nrow, rowcap;
    size_t unranked;
    uint64_t *tmp; /* one value per rank, for the medians (cgi_ranks_finish) */
};

cgi_ranks *cgi_ranks_new(void) { return calloc(1, sizeof(cgi_ranks)); }

void cgi_ranks_free(cgi_ranks *v)
{
    if (!v) return;
    free(v->rank), free(v->ix), free(v->cell), free(v->row), free(v->tmp), free(v);
}

/* Room for n + 1 elements of size sz in *p (capacity *cap); 0: out of memory. */
static int cgi_grow(void *p, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 1;
    size_t ncap = *cap ? *cap * 2 : 64;
    void *nv = realloc(*(void **)p, ncap * sz);
    if (!nv) return 0;
    *(void **)p = nv, *cap = ncap;
    return 1;
}

static size_t cgi_rank_slot(uint32_t rank, size_t cap) { return (rank * 2654435761u) & (cap - 1); }

uint32_t cgi_ranks_process(cgi_ranks *v, const cgi_stats_header *h, const char *host)
{
    if (!(h->rank_set & CGI_RANK_SET)) return v->unranked++, CGI_RANKS_NONE;
    for (size_t k = v->ixcap ? cgi_rank_slot(h->rank, v->ixcap) : 0; v->ixcap && v->ix[k]; k = (k + 1) & (v->ixcap - 1))
        if (v->rank[v->ix[k] - 1].rank == h->rank) return v->ix[k] - 1;
    if (v->nrank >= CGI_RANKS_OOM - 1 || !cgi_grow(&v->rank, &v->rankcap, v->nrank, sizeof *v->rank))
        return CGI_RANKS_OOM;
    if ((v->nrank + 1) * 2 > v->ixcap) {
        size_t cap = v->ixcap ? v->ixcap * 2 : 256;
        uint32_t *ix = calloc(cap, sizeof *ix);
        if (!ix) return CGI_RANKS_OOM;
        for (size_t i = 0; i < v->nrank; i++) {
            size_t k = cgi_rank_slot(v->rank[i].rank, cap);
            while (ix[k])
                k = (k + 1) & (cap - 1);
            ix[k] = (uint32_t)i + 1;
        }
        free(v->ix);
        v->ix = ix, v->ixcap = cap;
    }
    size_t k = cgi_rank_slot(h->rank, v->ixcap);
    while (v->ix[k])
        k = (k + 1) & (v->ixcap - 1);
    v->rank[v->nrank] = (cgi_rank_where){h->rank, host};
    v->ix[k] = (uint32_t)v->nrank + 1;
    return (uint32_t)v->nrank++;
}

/* The per-row figures of row (made, zero, when new); NULL: out of memory. */
static cgi_rank_row *cgi_row_figures(cgi_ranks *v, size_t row)
{
    while (v->nrow <= row) {
        if (!cgi_grow(&v->row, &v->rowcap, v->nrow, sizeof *v->row)) return NULL;
        memset(&v->row[v->nrow++], 0, sizeof *v->row);
    }
    return &v->row[row];
}

int cgi_ranks_site(cgi_ranks *v, uint32_t ix, size_t row, const cg_counters *c)
{
    cgi_rank_row *f = cgi_row_figures(v, row);
    if (!f || row > UINT32_MAX || !cgi_grow(&v->cell, &v->cellcap, v->ncell, sizeof *v->cell)) return -1;
    v->cell[v->ncell++] = (cgi_rank_cell){(uint32_t)row, ix, cgi_ctr_calls(c), cgi_ctr_total_ns(c)};
    uint32_t in = atomic_load_explicit(&c->inside.peak, memory_order_relaxed),
             wt = atomic_load_explicit(&c->waiting.peak, memory_order_relaxed);
    if (in > f->inside) f->inside = in, f->inside_at = ix + 1;
    if (wt > f->waiting) f->waiting = wt, f->waiting_at = ix + 1;
    return 0;
}

int cgi_ranks_members_only(cgi_ranks *v, size_t row)
{
    cgi_rank_row *f = cgi_row_figures(v, row);
    if (!f) return -1;
    f->members = 1;
    return 0;
}

int cgi_ranks_stall(cgi_ranks *v, uint32_t ix, size_t row, uint64_t ns)
{
    cgi_rank_row *f = cgi_row_figures(v, row);
    if (!f) return -1;
    if (ns > f->stall_ns) f->stall_ns = ns, f->stall_at = ix + 1;
    return 0;
}

static int cgi_by_ptr(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    return (x > y) - (x < y);
}

void cgi_ranks_counts(const cgi_ranks *v, size_t *ranks, size_t *hosts, size_t *unranked)
{
    *ranks = v->nrank, *unranked = v->unranked, *hosts = 0;
    /* The writer keeps one copy of each host name: distinct pointers are
     * distinct hosts. */
    const char **h = malloc((v->nrank ? v->nrank : 1) * sizeof *h);
    if (!h) return;
    for (size_t i = 0; i < v->nrank; i++)
        h[i] = v->rank[i].host;
    qsort(h, v->nrank, sizeof *h, cgi_by_ptr);
    for (size_t i = 0; i < v->nrank; i++)
        *hosts += i == 0 || h[i] != h[i - 1];
    free(h);
}

static int cgi_by_row_rank(const void *a, const void *b)
{
    const cgi_rank_cell *x = a, *y = b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return (x->ix > y->ix) - (x->ix < y->ix);
}

static int cgi_by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* min, median and max of n ranks' values, m of them in cells c (one per
 * rank), the other n - m zero; tmp holds m values. */
static cgi_rank_spread cgi_spread(const cgi_ranks *v, const cgi_rank_cell *c, size_t m, size_t n, int ns, uint64_t *tmp)
{
    cgi_rank_spread s = {0};
    size_t best = 0;
    for (size_t i = 0; i < m; i++) {
        tmp[i] = ns ? c[i].ns : c[i].calls;
        uint32_t rank = v->rank[c[i].ix].rank;
        if (i == 0 || tmp[i] > tmp[best] || (tmp[i] == tmp[best] && rank < v->rank[c[best].ix].rank)) best = i;
    }
    s.max = tmp[best];
    s.max_at = v->rank[c[best].ix];
    qsort(tmp, m, sizeof *tmp, cgi_by_u64);
    size_t zeros = n - m;
#define CGI_NTH(k) ((k) < zeros ? 0 : tmp[(k)-zeros])
    s.min = CGI_NTH(0);
    if (n % 2)
        s.median = CGI_NTH(n / 2);
    else {
        uint64_t a = CGI_NTH(n / 2 - 1), b = CGI_NTH(n / 2);
        s.median = a / 2 + b / 2 + (a % 2 + b % 2) / 2;
    }
#undef CGI_NTH
    return s;
}

/* The count most of n ranks made (m in cells c, the others 0; tmp holds
 * m values) and the ranks that made another, or every rank when no count
 * is the most common (report_ranks.h). n == m: only
 * the ranks of the cells are compared (a row of one communicator). */
static void cgi_odd_ranks(const cgi_ranks *v, const cgi_rank_cell *c, size_t m, size_t n, uint64_t *tmp,
                          cgi_rank_site *s)
{
    for (size_t i = 0; i < m; i++)
        tmp[i] = c[i].calls;
    qsort(tmp, m, sizeof *tmp, cgi_by_u64);
    uint64_t usual = 0;
    size_t most = n - m; /* the ranks that never called it made 0 */
    int tie = 0;
    for (size_t i = 0, j; i < m; i = j) {
        for (j = i; j < m && tmp[j] == tmp[i];)
            j++;
        if (j - i > most)
            most = j - i, usual = tmp[i], tie = 0;
        else if (j - i == most)
            tie = 1;
    }
    s->usual_calls = usual;
    s->no_usual = (uint8_t)tie;
    /* Ranks by number: every rank index, its cell (cells are in index order) or 0. */
    cgi_rank_where odd[CGI_RANKS_ODD_KEPT];
    uint64_t odd_calls[CGI_RANKS_ODD_KEPT];
    size_t k = 0;
    for (size_t ix = 0; ix < v->nrank; ix++) {
        while (k < m && c[k].ix < ix)
            k++;
        int has = k < m && c[k].ix == ix;
        uint64_t calls = has ? c[k].calls : 0;
        if ((calls == usual && !tie) || (!has && n == m)) continue;
        cgi_rank_where at = v->rank[ix];
        /* Kept: the lowest rank numbers (insertion into a short sorted list). */
        size_t pos = s->nodd < CGI_RANKS_ODD_KEPT ? s->nodd : CGI_RANKS_ODD_KEPT;
        while (pos > 0 && odd[pos - 1].rank > at.rank) {
            if (pos < CGI_RANKS_ODD_KEPT) odd[pos] = odd[pos - 1], odd_calls[pos] = odd_calls[pos - 1];
            pos--;
        }
        if (pos < CGI_RANKS_ODD_KEPT) odd[pos] = at, odd_calls[pos] = calls;
        s->nodd++;
    }
    for (size_t i = 0; i < s->nodd && i < CGI_RANKS_ODD_KEPT; i++)
        s->odd[i] = odd[i], s->odd_calls[i] = odd_calls[i];
}

int cgi_ranks_finish(cgi_ranks *v)
{
    if (!v->ncell) return 0;
    qsort(v->cell, v->ncell, sizeof *v->cell, cgi_by_row_rank);
    /* A rank's processes into one cell each row. */
    size_t n = 0;
    for (size_t i = 0; i < v->ncell; i++) {
        if (n && v->cell[n - 1].row == v->cell[i].row && v->cell[n - 1].ix == v->cell[i].ix) {
            v->cell[n - 1].calls += v->cell[i].calls;
            v->cell[n - 1].ns += v->cell[i].ns;
        } else
            v->cell[n++] = v->cell[i];
    }
    v->ncell = n;
    v->tmp = malloc(v->nrank * sizeof *v->tmp);
    return v->tmp ? 0 : -1;
}

/* The summary of the row whose cells are v->cell[i, end). */
static void cgi_site_of(const cgi_ranks *v, size_t i, size_t end, cgi_rank_site *s)
{
    const cgi_rank_cell *c = &v->cell[i];
    const cgi_rank_row *f = &v->row[c->row];
    *s = (cgi_rank_site){.row = c->row, .ranks = (uint32_t)(end - i)};
    for (size_t k = i; k < end; k++)
        s->calls += v->cell[k].calls, s->total_ns += v->cell[k].ns;
    size_t n = f->members ? end - i : v->nrank; /* the ranks compared */
    s->calls_per_rank = cgi_spread(v, c, end - i, n, 0, v->tmp);
    s->ns_per_rank = cgi_spread(v, c, end - i, n, 1, v->tmp);
    cgi_odd_ranks(v, c, end - i, n, v->tmp, s);
    s->peak_inside = f->inside, s->peak_waiting = f->waiting, s->stall_ns = f->stall_ns;
    if (f->inside_at) s->peak_inside_at = v->rank[f->inside_at - 1];
    if (f->waiting_at) s->peak_waiting_at = v->rank[f->waiting_at - 1];
    if (f->stall_at) s->stall_at = v->rank[f->stall_at - 1];
}

void cgi_ranks_each(const cgi_ranks *v, void (*fn)(const cgi_rank_site *, void *), void *arg)
{
    for (size_t i = 0, end; v->tmp && i < v->ncell; i = end) {
        for (end = i; end < v->ncell && v->cell[end].row == v->cell[i].row;)
            end++;
        cgi_rank_site s;
        cgi_site_of(v, i, end, &s);
        fn(&s, arg);
    }
}

int cgi_ranks_one(const cgi_ranks *v, size_t row, cgi_rank_site *s)
{
    size_t lo = 0, hi = v->tmp ? v->ncell : 0; /* the first cell of the row: cells are sorted by row */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->cell[mid].row < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == v->ncell || v->cell[lo].row != row) return 0;
    size_t end = lo;
    while (end < v->ncell && v->cell[end].row == row)
        end++;
    cgi_site_of(v, lo, end, s);
    return 1;
}
