/* The advice of a report, as data: each entry point that several threads
 * were inside at once, against the quirks that serialize it. The writers
 * (json_write.c, text_table.c) put it in their format. */
#define _GNU_SOURCE
#include "internal.h"

#include "../policy/policy_ini.h"

#include <stdlib.h>
#include <string.h>

/* ---- advice: the known bugs the run's concurrency would meet ------------------
 * After the run, from the combined table and the quirks file in use: each
 * entry point that several threads were inside at once is checked against
 * every quirk that serializes it, whatever driver ran (quirks.c), and says
 * whether the quirk affects this run. Where a process applied the quirk,
 * the advice says so instead of the fix. */

cgi_quirks_naming_fn *cgi_report_quirks;

typedef struct cgi_advice_walk {
    const cgi_report_writer *w;
    cgi_advice a;
    cgi_advice_fn *fn;
    void *arg;
} cgi_advice_walk;

/* The --serialize value being written: each site as SITE=DOMAIN[:once|:handle], or
 * SITE=DOMAIN:shared for one of the quirk's shared entry points. */
typedef struct cgi_fix_out {
    FILE *out;
    const char *domain, *scope;
    int any; /* an item was written: the next needs a comma */
} cgi_fix_out;

static int cgi_fix_item(const char *item, size_t n, void *arg)
{
    cgi_fix_out *f = arg;
    size_t k = strlen(CGI_QUIRK_SHARED);
    int shared = n > k && memcmp(item + n - k, CGI_QUIRK_SHARED, k) == 0;
    fprintf(f->out, "%s%.*s=%s%s", f->any ? "," : "", (int)(shared ? n - k : n), item, f->domain,
            shared ? CGI_QUIRK_SHARED : f->scope);
    f->any = 1;
    return 0;
}

char *cgi_advice_fix(const cgi_quirk_view *q)
{
    if (q->advice) return NULL; /* no lock is its fix: its advice says what to do */
    char *s = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&s, &len);
    if (!out) return NULL;
    cgi_fix_out f = {out, q->domain, q->once ? ":once" : q->handle ? ":handle" : "", 0};
    fputs("--serialize ", out);
    pini_split(q->sites, ",", cgi_fix_item, &f);
    if (fclose(out) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

/* The run's quirk of that name, or NULL when no process matched it. */
static const cgi_quirk_seen *cgi_seen_in_run(const cgi_report_writer *w, const char *name)
{
    for (size_t k = 0; k < w->nquirks; k++)
        if (strcmp(w->quirks[k].name, name) == 0) return &w->quirks[k];
    return NULL;
}

/* Whether the quirk affects the run: a process matched it (its record);
 * its API's drivers were probed and none matched it; or not known (never
 * probed: no process initialized the API, or a report from before probes
 * were recorded; or a process kept not every quirk it matched). */
static int cgi_affects(const cgi_report_writer *w, const cgi_quirk_view *q)
{
    if (cgi_seen_in_run(w, q->name)) return 1;
    if (w->quirks_unsure) return -1;
    for (size_t k = 0; k < w->nprobed; k++)
        if (strcmp(w->probed[k], q->api) == 0) return 0;
    return -1;
}

static void cgi_advice_quirk(const cgi_quirk_view *q, void *arg)
{
    cgi_advice_walk *walk = arg;
    const cgi_row *row = walk->a.row;
    const cgi_quirk_seen *seen = cgi_seen_in_run(walk->w, q->name);
    int applied = seen && seen->applied;
    /* Applied: it serialized the entry point, so one thread was inside and
     * others waited; say so where threads did wait. */
    if (applied ? row->peak_inside < 2 && row->peak_waiting < 1 : row->peak_inside < 2) return;
    walk->a.quirk = q;
    walk->a.applied = applied;
    walk->a.affects = cgi_affects(walk->w, q);
    walk->fn(&walk->a, walk->arg);
    walk->a.index++;
}

size_t cgi_advice_each(const cgi_report_writer *w, cgi_advice_fn *fn, void *arg)
{
    cgi_advice_walk walk = {.w = w, .fn = fn, .arg = arg};
    for (size_t x = 0; x < w->nrow; x++) {
        walk.a.row = cgi_row_at(w, x);
        if (cgi_report_quirks && (walk.a.row->peak_inside >= 2 || walk.a.row->peak_waiting >= 1))
            cgi_report_quirks(CGI_ROW_NAME(walk.a.row), cgi_advice_quirk, &walk);
    }
    return walk.a.index;
}
