/* The text's view across ranks (report_ranks.h), for people: at a width,
 * only the entry points where the ranks differ (in calls, or one rank
 * slower than the median by CGI_RANKS_SLOWER and CGI_RANKS_SLOWER_NS), and
 * the CGI_RANKS_TOP that took most time, one line each and in words ("rank
 * 0 made 8 MPI_Recv calls, the others 0"), the most time first; every
 * entry point alike on all ranks is one line at the end. With every row
 * and column (--all) a table of each entry point's figures. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A rank slower than the median by this factor, and by this much, differs. */
#define CGI_RANKS_SLOWER 2
#define CGI_RANKS_SLOWER_NS 1000000u
/* The entry points that took most time, listed whether or not ranks differ. */
#define CGI_RANKS_TOP 3

/* The entry points the view lists: the top by time, and those where the
 * ranks differ; 24 bytes each, found in one pass and sorted by time. */
typedef struct cgi_ranks_pick {
    uint64_t total_ns, calls;
    size_t row;
} cgi_ranks_pick;

typedef struct cgi_ranks_list {
    cgi_ranks_pick *v;
    size_t n, cap;
    cgi_ranks_pick top[CGI_RANKS_TOP]; /* the most time of those alike, most first */
    size_t ntop, alike;
    int oom;
} cgi_ranks_list;

static int cgi_calls_differ(const cgi_rank_site *s);
static int cgi_time_differs(const cgi_rank_site *s);

static int cgi_pick_before(const cgi_ranks_pick *a, const cgi_ranks_pick *b)
{
    if (a->total_ns != b->total_ns) return a->total_ns > b->total_ns;
    if (a->calls != b->calls) return a->calls > b->calls;
    return a->row < b->row;
}

static void cgi_ranks_keep(const cgi_rank_site *s, void *arg)
{
    cgi_ranks_list *l = arg;
    cgi_ranks_pick p = {s->total_ns, s->calls, s->row};
    if (l->oom) return;
    if (!cgi_calls_differ(s) && !cgi_time_differs(s)) {
        /* Alike on every rank: listed only among the top by time. */
        l->alike++;
        size_t k = l->ntop < CGI_RANKS_TOP ? l->ntop++ : CGI_RANKS_TOP;
        while (k > 0 && cgi_pick_before(&p, &l->top[k - 1])) {
            if (k < CGI_RANKS_TOP) l->top[k] = l->top[k - 1];
            k--;
        }
        if (k < CGI_RANKS_TOP) l->top[k] = p;
        return;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        cgi_ranks_pick *v = realloc(l->v, cap * sizeof *v);
        if (!v) return (void)(l->oom = 1);
        l->v = v, l->cap = cap;
    }
    l->v[l->n++] = p;
}

static int cgi_ranks_by_time(const void *pa, const void *pb)
{
    const cgi_ranks_pick *a = pa, *b = pb;
    return cgi_pick_before(a, b) ? -1 : cgi_pick_before(b, a) ? 1 : 0;
}

static int cgi_calls_differ(const cgi_rank_site *s) { return s->calls_per_rank.min != s->calls_per_rank.max; }

static int cgi_time_differs(const cgi_rank_site *s)
{
    const cgi_rank_spread *t = &s->ns_per_rank;
    return t->max - t->median >= CGI_RANKS_SLOWER_NS && t->max / CGI_RANKS_SLOWER >= t->median;
}

static const char *cgi_calls_word(uint64_t n) { return n == 1 ? "call" : "calls"; }

/* "rank 0 made 8 calls, the others 0", "ranks 1, 2 made 0 calls, the others 12",
 * "ranks 1, 3 made 9, 11 calls, most ranks 10", "10 calls each". */
static void cgi_ranks_calls_text(FILE *out, const cgi_rank_site *s)
{
    const cgi_rank_spread *c = &s->calls_per_rank;
    if (!cgi_calls_differ(s)) return (void)fprintf(out, "%" PRIu64 " %s each", c->min, cgi_calls_word(c->min));
    if (s->no_usual)
        return (void)fprintf(
            out, "%" PRIu64 " to %" PRIu64 " calls a rank, no count most ranks made (rank %u made the most)", c->min,
            c->max, c->max_at.rank);
    uint32_t kept = s->nodd < CGI_RANKS_ODD_KEPT ? s->nodd : CGI_RANKS_ODD_KEPT;
    int same = 1;
    for (uint32_t k = 1; k < kept; k++)
        same &= s->odd_calls[k] == s->odd_calls[0];
    fprintf(out, "rank%s ", s->nodd == 1 ? "" : "s");
    for (uint32_t k = 0; k < kept; k++)
        fprintf(out, "%s%u", k ? ", " : "", s->odd[k].rank);
    if (s->nodd > kept) fprintf(out, " and %u more", s->nodd - kept);
    if (s->nodd > kept)
        fputs(" made other counts", out);
    else if (same)
        fprintf(out, " made %" PRIu64 " %s", s->odd_calls[0], cgi_calls_word(s->odd_calls[0]));
    else
        for (uint32_t k = 0; k < kept; k++)
            fprintf(out, "%s%" PRIu64 "%s", k ? ", " : " made ", s->odd_calls[k], k + 1 < kept ? "" : " calls");
    fprintf(out, ", %s %" PRIu64, s->nodd == 1 || same ? "the others" : "most ranks", s->usual_calls);
}

/* One entry point in words: its calls over the ranks, then its time. */
static void cgi_ranks_line(FILE *out, const cgi_report_writer *w, const cgi_rank_site *s)
{
    const cgi_row *row = cgi_row_at(w, s->row);
    const cgi_rank_spread *t = &s->ns_per_rank;
    fprintf(out, "  %s: ", CGI_ROW_NAME(row));
    cgi_ranks_calls_text(out, s);
    /* Where the calls differ, so do the times: their sum says enough. */
    if (cgi_calls_differ(s))
        fprintf(out, "; %.3f ms in all", cgi_ms(s->total_ns));
    else if (t->max != t->min)
        fprintf(out, "; %.3f to %.3f ms a rank, rank %u the slowest", cgi_ms(t->min), cgi_ms(t->max), t->max_at.rank);
    else
        fprintf(out, "; %.3f ms a rank", cgi_ms(t->max));
    if (!cgi_calls_differ(s) && cgi_time_differs(s) && t->median)
        fprintf(out, " (%.1fx the median, %.3f)", (double)t->max / (double)t->median, cgi_ms(t->median));
    if (s->peak_inside >= 2)
        fprintf(out, "; %u threads inside at once at rank %u", s->peak_inside, s->peak_inside_at.rank);
    if (s->peak_waiting) fprintf(out, "; %u waiting at once at rank %u", s->peak_waiting, s->peak_waiting_at.rank);
    fputc('\n', out);
}

/* Every row and column: one line an entry point, as wide as it needs. */
static void cgi_ranks_table_row(FILE *out, const cgi_report_writer *w, const cgi_rank_site *s)
{
    const cgi_row *row = cgi_row_at(w, s->row);
    const cgi_rank_spread *c = &s->calls_per_rank, *t = &s->ns_per_rank;
    int apiw = w->apiw > 4 ? w->apiw : 4;
    char cat[96], tat[96];
    snprintf(cat, sizeof cat, "%u@%s", c->max_at.rank, c->max_at.host);
    snprintf(tat, sizeof tat, "%u@%s", t->max_at.rank, t->max_at.host);
    fprintf(out,
            "  %-*s %-36s %6u %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64
            " %-16s %11.3f %10.3f %10.3f %10.3f %s\n",
            apiw, row->api, CGI_ROW_NAME(row), s->ranks, s->calls, c->min, c->median, c->max, cat, cgi_ms(s->total_ns),
            cgi_ms(t->min), cgi_ms(t->median), cgi_ms(t->max), tat);
    if (!s->peak_inside && !s->peak_waiting && !s->stall_ns) return;
    fprintf(out, "%*s", apiw + 5, "");
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

typedef struct cgi_ranks_table_arg {
    FILE *out;
    const cgi_report_writer *w;
} cgi_ranks_table_arg;

static void cgi_ranks_table_each(const cgi_rank_site *s, void *arg)
{
    const cgi_ranks_table_arg *a = arg;
    cgi_ranks_table_row(a->out, a->w, s);
}

/* The list at a width: merged by time, those where the ranks differ and
 * those alike among the CGI_RANKS_TOP of all, one line each. */
static void cgi_ranks_lines(FILE *out, const cgi_report_writer *w, const cgi_ranks_list *l)
{
    size_t d = 0, t = 0, shown = 0, alike_shown = 0;
    while (d < l->n || t < l->ntop) {
        int take_top = t < l->ntop && (d == l->n || cgi_pick_before(&l->top[t], &l->v[d]));
        if (take_top && shown >= CGI_RANKS_TOP) { /* alike and past the top: counted, not listed */
            t++;
            continue;
        }
        cgi_rank_site s;
        if (cgi_ranks_one(w->ranks, take_top ? l->top[t].row : l->v[d].row, &s)) cgi_ranks_line(out, w, &s);
        take_top ? (void)(t++, alike_shown++) : (void)d++;
        shown++;
    }
    size_t alike = l->alike - alike_shown;
    if (alike)
        fprintf(out, "  %zu more entry point%s alike on every rank (--all lists %s)\n", alike, alike == 1 ? "" : "s",
                alike == 1 ? "it" : "them");
}

int cgi_text_across_ranks(FILE *out, const cgi_report_writer *w)
{
    size_t ranks, hosts, unranked;
    cgi_ranks_counts(w->ranks, &ranks, &hosts, &unranked);
    if (ranks < 2) return 0;
    fprintf(out, "callguard: across %zu ranks on %zu host%s", ranks, hosts, hosts == 1 ? "" : "s");
    if (unranked) fprintf(out, " (%zu process%s without a rank left out)", unranked, unranked == 1 ? "" : "es");
    if (!w->width) {
        int apiw = w->apiw > 4 ? w->apiw : 4;
        fprintf(out, "; per rank: min, median, max, where the max was (rank@host):\n");
        fprintf(out, "  %-*s %-36s %6s %10s %10s %10s %10s %-16s %11s %10s %10s %10s %s\n", apiw, "api", "entry point",
                "ranks", "calls", "min", "median", "max", "max at", "total ms", "min ms", "median ms", "max ms",
                "max at");
        cgi_ranks_each(w->ranks, cgi_ranks_table_each, &(cgi_ranks_table_arg){out, w});
        return 0;
    }
    cgi_ranks_list l = {0};
    cgi_ranks_each(w->ranks, cgi_ranks_keep, &l);
    if (l.oom) return free(l.v), ENOMEM;
    if (l.n) qsort(l.v, l.n, sizeof *l.v, cgi_ranks_by_time); /* l.v is NULL when no entry point was kept */
    fprintf(out,
            ":\n  the top %d by time, then where ranks differ (calls, or a rank over %dx the median time and %u ms)\n",
            CGI_RANKS_TOP, CGI_RANKS_SLOWER, CGI_RANKS_SLOWER_NS / 1000000u);
    cgi_ranks_lines(out, w, &l);
    free(l.v);
    return 0;
}
