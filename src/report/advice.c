/* The advice of a report, in either format: each entry point that several
 * threads were inside at once, against the quirks that serialize it. */
#define _GNU_SOURCE
#include "internal.h"

#include "../policy/policy_ini.h"

#include <string.h>

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
void cgi_advice_all(FILE *out, const cgi_report_writer *w)
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
