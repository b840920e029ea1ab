/* The text report's table of entry points, a process's or the combined
 * one: sorted by time in the driver, largest first. By default it fits
 * the width (docs/report.md, "The table"): time, its share, calls, the
 * average and longest call, and what is unusual about a row in words;
 * rows that took next to no time and did nothing unusual are one line.
 * With every row and column (--all) it is as wide as it needs. */
#define _GNU_SOURCE
#include "internal.h"

#include "../common/names.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

cgi_trow *cgi_rows_of_process(const cgi_stats_region *r, size_t *n)
{
    cgi_trow *v = malloc((cgi_nrec(r) + 1) * sizeof *v);
    *n = 0;
    if (!v) return NULL;
    for (uint32_t k = 0; k < cgi_nrec(r); k++) {
        const cgi_stats_record *rec = &r->r[k];
        const cg_counters *c = &rec->c;
        if (cgi_ctr_calls(c) == 0) continue;
        cgi_trow *t = &v[(*n)++];
        *t = (cgi_trow){.api = rec->api,
                        .name = rec->name,
                        .domain = rec->domain,
                        .transition = rec->transition,
                        .scope = rec->scope,
                        .blocking = rec->blocking,
                        .max_ns = cgi_ld(&c->max_ns),
                        .peak_inside = cgi_peak_of(&c->inside),
                        .peak_waiting = cgi_peak_of(&c->waiting),
                        .once_at = cgi_ld(&rec->once_at),
                        .rec = rec};
        cgi_add(&t->t, c);
    }
    return v;
}

cgi_trow *cgi_rows_of_writer(const cgi_report_writer *w, size_t *n)
{
    cgi_trow *v = malloc((w->nrow + 1) * sizeof *v);
    *n = 0;
    if (!v) return NULL;
    for (size_t x = 0; x < w->nrow; x++) {
        const cgi_row *row = cgi_row_at(w, x);
        v[(*n)++] = (cgi_trow){.api = row->api,
                               .name = CGI_ROW_NAME(row),
                               .domain = CGI_ROW_DOMAIN(row),
                               .transition = row->transition,
                               .scope = row->scope,
                               .blocking = row->blocking,
                               .mixed = row->mixed,
                               .t = row->t,
                               .max_ns = row->max_ns,
                               .peak_inside = row->peak_inside,
                               .peak_waiting = row->peak_waiting,
                               .once_at = row->once_at,
                               .codes = row->codes};
    }
    return v;
}

/* Time in the driver, largest first; then calls, then by name. */
static int cgi_by_time(const void *pa, const void *pb)
{
    const cgi_trow *a = pa, *b = pb;
    if (a->t.total_ns != b->t.total_ns) return a->t.total_ns < b->t.total_ns ? 1 : -1;
    if (a->t.calls != b->t.calls) return a->t.calls < b->t.calls ? 1 : -1;
    int c = strcmp(a->name, b->name);
    return c ? c : strcmp(a->api, b->api);
}

void cgi_rows_sort(cgi_trow *v, size_t n) { qsort(v, n, sizeof *v, cgi_by_time); }

/* "    results: ZE_RESULT_NOT_READY 999 (a state), ZE_RESULT_ERROR_DEVICE_LOST 1" under a row. */
static void cgi_table_codes(FILE *out, int indent, const cgi_trow *t)
{
    cgi_code_list own = {.n = 0};
    const cgi_code_list *l = t->codes;
    if (t->rec) cgi_codes_add(&own, t->rec, CGI_STATS_MAX_CODES), l = &own;
    if (!l) return;
    uint64_t oe, os;
    cgi_codes_other(l, &oe, &os);
    if (!l->n && !oe && !os) return;
    fprintf(out, "%*sresults:", indent, "");
    size_t k = 0;
    for (size_t x = 0; x < l->n; x++, k++)
        fprintf(out, "%s %s %" PRIu64 "%s", k ? "," : "", l->v[x].name, l->v[x].count,
                l->v[x].state ? " (a state)" : "");
    if (oe) fprintf(out, "%s other failures %" PRIu64, k++ ? "," : "", oe);
    if (os) fprintf(out, "%s other states %" PRIu64, k++ ? "," : "", os);
    fputc('\n', out);
}

/* The policy as `callguard run` and policy files say it: all of it, or
 * (brief) only what differs from the default (not serialized, the runtime
 * left around every call where it is left at all). "" when nothing does. */
static void cgi_policy_text(const cgi_trow *t, int brief, char *buf, size_t cap)
{
    int len = 0;
    buf[0] = '\0';
    if (!brief || t->transition != CG_TRANSITION_ALWAYS)
        len += snprintf(buf, cap, "transition=%s", cgi_transition_name(t->transition));
    if (t->domain[0])
        len += snprintf(buf + len, cap - (size_t)len, "%sserialize=%s%s%s", len ? " " : "", t->domain,
                        t->scope == CG_SCOPE_PROCESS ? "" : ":",
                        t->scope == CG_SCOPE_PROCESS ? "" : cgi_scope_name(t->scope));
    if (t->domain[0] && t->scope == CG_SCOPE_ONCE) {
        if (t->once_at == CGI_ONCE_BEFORE)
            len += snprintf(buf + len, cap - (size_t)len, " opened before the first call (by the parent)");
        else if (t->once_at)
            len += snprintf(buf + len, cap - (size_t)len, " until first success at call %" PRIu64 " of %" PRIu64,
                            t->once_at, t->t.calls);
        else
            len += snprintf(buf + len, cap - (size_t)len, " (no success yet: serialized throughout)");
    }
    if (t->blocking && !brief) len += snprintf(buf + len, cap - (size_t)len, " blocking");
    if (t->mixed) snprintf(buf + len, cap - (size_t)len, "%s(differs between processes)", len ? " " : "");
}

static const char *cgi_peaks_text(char *buf, size_t cap, uint32_t inside, uint32_t waiting)
{
    if (!inside) return "-";
    snprintf(buf, cap, "%u/%u", inside, waiting);
    return buf;
}

/* What a max shown as "-" means (cgi_avg_max). */
#define CGI_NO_MAX                                                                                                     \
    "calls of about the watchdog's 1 ms tick or shorter, whose sampled times average more than the longest "           \
    "seen: --timing exact times each"

/* A time in ms in at most 10 columns. */
static const char *cgi_ms_text(char *buf, size_t cap, double ms)
{
    snprintf(buf, cap, ms < 1e5 ? "%.3f" : ms < 1e7 ? "%.1f" : "%.0f", ms);
    return buf;
}

/* A row's average call, and its longest: "-" where the average is more.
 * Sampled times (docs/report.md, "Sampled times") estimate the total from
 * the watchdog's ticks while the longest call is a lower bound taken
 * between ticks: calls of about a tick or shorter can average more than
 * the longest seen, and then no longest call is known. Returns whether the
 * max is shown. */
static int cgi_avg_max(const cgi_trow *t, char *avg, char *max, size_t cap)
{
    double a = t->t.calls ? cgi_ms(t->t.total_ns) / (double)t->t.calls : 0.0, m = cgi_ms(t->max_ns);
    cgi_ms_text(avg, cap, a), cgi_ms_text(max, cap, m);
    /* Compared as printed: 0.1234 and 0.1231 are both 0.123. */
    if (strtod(avg, NULL) <= strtod(max, NULL)) return 1;
    snprintf(max, cap, "-");
    return 0;
}

/* Every row and column, as wide as the names and policies need. */
static void cgi_table_all(FILE *out, const cgi_trow *v, size_t n, const char *timing)
{
    int apiw = 4, nw = 36;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        int a = (int)strlen(v[i].api), m = (int)strlen(v[i].name);
        apiw = a > apiw ? a : apiw, nw = m > nw ? m : nw;
        total += v[i].t.total_ns;
    }
    fprintf(out, "  %-*s %-*s %10s %8s %8s %8s %11s %7s %10s %10s %12s %7s %10s  %s", apiw, "api", nw, "entry point",
            "calls", "nested", "errors", "states", "total ms", "% time", "avg ms", "max ms", "lock wait ms", "stalls",
            "peak in/wt", "policy");
    if (timing) fprintf(out, " (times %s)", timing);
    fputc('\n', out);
    int no_max = 0;
    for (size_t i = 0; i < n; i++) {
        const cgi_trow *t = &v[i];
        char policy[160], peaks[24], avg[32], max[32];
        cgi_policy_text(t, 0, policy, sizeof policy);
        no_max |= !cgi_avg_max(t, avg, max, sizeof avg);
        fprintf(out,
                "  %-*s %-*s %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
                " %11.3f %7.1f %10s %10s %12.3f %7" PRIu64 " %10s  %s\n",
                apiw, t->api, nw, t->name, t->t.calls, t->t.nested, t->t.errors, t->t.states, cgi_ms(t->t.total_ns),
                total ? 100.0 * (double)t->t.total_ns / (double)total : 0.0, avg, max, cgi_ms(t->t.lock_wait_ns),
                t->t.stalls, cgi_peaks_text(peaks, sizeof peaks, t->peak_inside, t->peak_waiting), policy);
        cgi_table_codes(out, apiw + 5, t);
    }
    if (no_max) fputs("  max ms -: " CGI_NO_MAX "\n", out);
}

/* ---- the default: at most the width ---------------------------------------------- */

/* The numbers' columns: " %10s %6s %9s %10s %10s". */
#define CGI_TABLE_NUMS 50
/* Distinct policies a table names in its legend; rows of more say "[+]". */
#define CGI_TABLE_POLICIES 9

typedef struct cgi_legend {
    char policy[CGI_TABLE_POLICIES][160];
    int n, more;
    int no_max; /* a row's max is not shown: its average is more (below) */
} cgi_legend;

/* Whether a row says something beyond its time: a result other than
 * success, a lock or stall, threads at once, a policy of its own. */
static int cgi_row_unusual(const cgi_trow *t)
{
    return t->t.errors || t->t.states || t->t.nested || t->t.lock_wait_ns || t->t.stalls || t->peak_inside >= 2 ||
           t->peak_waiting || t->mixed || t->domain[0] || t->transition != CG_TRANSITION_ALWAYS;
}

/* Under 0.05% of the table's time (shown as 0.0%) and nothing unusual. */
static int cgi_row_folds(const cgi_trow *t, uint64_t total)
{
    return (unsigned __int128)t->t.total_ns * 2000 < total && !cgi_row_unusual(t);
}

/* What is unusual about a row, in words ("" when nothing). */
static void cgi_row_notes(const cgi_trow *t, cgi_legend *lg, char *buf, size_t cap)
{
    int len = 0;
    buf[0] = '\0';
#define CGI_NOTE(...) (len += snprintf(buf + len, cap - (size_t)len, __VA_ARGS__))
    if (t->t.lock_wait_ns) CGI_NOTE("%.3f ms lock wait", cgi_ms(t->t.lock_wait_ns));
    if (t->peak_inside >= 2 || t->peak_waiting) CGI_NOTE("%s%u inside", len ? ", " : "", t->peak_inside);
    if (t->peak_waiting) CGI_NOTE(", %u waiting", t->peak_waiting);
    if (t->peak_inside >= 2 || t->peak_waiting) CGI_NOTE(" at once");
    if (t->t.stalls) CGI_NOTE("%s%" PRIu64 " stall%s", len ? ", " : "", t->t.stalls, t->t.stalls == 1 ? "" : "s");
    if (t->t.nested) CGI_NOTE("%s%" PRIu64 " nested", len ? ", " : "", t->t.nested);
    char policy[160];
    cgi_policy_text(t, 1, policy, sizeof policy);
    if (policy[0]) {
        int k = 0;
        while (k < lg->n && strcmp(lg->policy[k], policy) != 0)
            k++;
        if (k == lg->n && k < CGI_TABLE_POLICIES) memcpy(lg->policy[lg->n++], policy, sizeof policy);
        if (k < lg->n)
            CGI_NOTE("%s[%d]", len ? " " : "", k + 1);
        else
            CGI_NOTE("%s[+]", len ? " " : ""), lg->more = 1;
    }
#undef CGI_NOTE
}

static void cgi_table_row(FILE *out, const cgi_trow *t, uint64_t total, int nw, int width, cgi_legend *lg)
{
    char ms[32], avg[32], max[32], notes[320];
    int len = (int)strlen(t->name);
    if (len > nw) /* cut with a marker: a table row never wraps */
        fprintf(out, "  %.*s...", nw - 3, t->name);
    else
        fprintf(out, "  %-*s", nw, t->name);
    if (!cgi_avg_max(t, avg, max, sizeof avg)) lg->no_max = 1;
    fprintf(out, " %10s %6.1f %9" PRIu64 " %10s %10s", cgi_ms_text(ms, sizeof ms, cgi_ms(t->t.total_ns)),
            total ? 100.0 * (double)t->t.total_ns / (double)total : 0.0, t->t.calls, avg, max);
    cgi_row_notes(t, lg, notes, sizeof notes);
    if (!notes[0])
        fputc('\n', out);
    else if (2 + nw + CGI_TABLE_NUMS + 2 + (int)strlen(notes) <= width)
        fprintf(out, "  %s\n", notes);
    else
        fprintf(out, "\n      %s\n", notes);
    cgi_table_codes(out, 6, t);
}

static void cgi_table_legend(FILE *out, const cgi_legend *lg, const char *timing)
{
    fprintf(out, "  time: in the driver, summed over threads%s%s%s; %%: of the table's time; avg, max: a call\n",
            timing ? " (" : "", timing ? timing : "", timing ? ")" : "");
    if (lg->no_max) fputs("  max -: " CGI_NO_MAX "\n", out);
    if (!lg->n) return;
    fputs("  policy other than the default:", out);
    for (int k = 0; k < lg->n; k++)
        fprintf(out, " [%d] %s%s", k + 1, lg->policy[k], k + 1 < lg->n || lg->more ? ";" : "");
    fputs(lg->more ? " [+] others: --all shows them\n" : "\n", out);
}

static void cgi_table_default(FILE *out, const cgi_trow *v, size_t n, int width, const char *timing)
{
    uint64_t total = 0, fcalls = 0, fns = 0;
    size_t folds = 0;
    for (size_t i = 0; i < n; i++)
        total += v[i].t.total_ns;
    for (size_t i = 0; i < n; i++)
        if (cgi_row_folds(&v[i], total)) folds++, fcalls += v[i].t.calls, fns += v[i].t.total_ns;
    int fold = folds >= 2; /* one row is no longer than the line that would say it */
    int nw = (int)strlen("entry point"), most = width - 2 - CGI_TABLE_NUMS;
    for (size_t i = 0; i < n; i++)
        if (!(fold && cgi_row_folds(&v[i], total)) && (int)strlen(v[i].name) > nw) nw = (int)strlen(v[i].name);
    if (nw > most) nw = most > 12 ? most : 12;
    fprintf(out, "  %-*s %10s %6s %9s %10s %10s\n", nw, "entry point", "time ms", "%", "calls", "avg ms", "max ms");
    cgi_legend lg = {.n = 0};
    for (size_t i = 0; i < n; i++)
        if (!(fold && cgi_row_folds(&v[i], total))) cgi_table_row(out, &v[i], total, nw, width, &lg);
    if (fold)
        fprintf(out,
                "  ... %zu more entry points, %" PRIu64
                " calls, %.3f ms (each under 0.05%% of the time; --all lists them)\n",
                folds, fcalls, cgi_ms(fns));
    cgi_table_legend(out, &lg, timing);
}

void cgi_table_write(FILE *out, cgi_trow *v, size_t n, int width, const char *timing)
{
    cgi_rows_sort(v, n);
    if (width)
        cgi_table_default(out, v, n, width, timing);
    else
        cgi_table_all(out, v, n, timing);
}
