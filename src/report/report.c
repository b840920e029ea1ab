/* Reports: JSON for machines (schema in docs/report.md), a table for
 * people. Both are written from statistics regions, so one process's report
 * at exit and the CLI's merge of a whole process tree share this code: a
 * report is begun, each process added (written, and folded into the
 * combined table), and ended (the advice and the totals). */
#define _GNU_SOURCE
#include "internal.h"

#include "../common/errors.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cgi_report_begin(const char *path, cg_report_format format, cgi_report_writer **out)
{
    *out = NULL;
    if (!path || !*path) return cgi_fail(CG_EINVAL, "report path is empty: expected a file name or '-'");
    if (format != CG_REPORT_JSON && format != CG_REPORT_TEXT)
        return cgi_fail(CG_EINVAL, "report format %d: expected CG_REPORT_JSON or CG_REPORT_TEXT", (int)format);
    cgi_report_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path)) || !(w->ranks = cgi_ranks_new())) {
        if (w) free(w->path);
        free(w);
        return cgi_fail(CG_ENOMEM, "out of memory");
    }
    w->format = format;
    int e = cgi_outfile_open(path, &w->o);
    if (e) {
        cgi_ranks_free(w->ranks), free(w->path), free(w);
        return cgi_fail(CG_EIO, "cannot write report %s: %s", path, strerror(e));
    }
    if (format == CG_REPORT_JSON) cgi_json_begin(w->o.f);
    *out = w;
    return CG_OK;
}

void cgi_report_add(cgi_report_writer *w, const cgi_proc_view *p)
{
    cgi_totals t = cgi_proc_totals(p->region);
    if (t.calls == 0) return; /* a process that made no guarded call is not listed */
    if (w->format == CG_REPORT_JSON)
        cgi_json_process(w->o.f, p, &t, w->nproc);
    else
        cgi_text_process(w->o.f, p, &t);
    cgi_fold(w, p->region); /* the combined table, and the advice of either format */
    cgi_sum(&w->all, &t);
    w->nproc++;
}

static void cgi_report_free(cgi_report_writer *w)
{
    for (cgi_arena_block *b = w->arena, *next; b; b = next)
        next = b->next, free(b);
    for (size_t b = 0; b < w->nblk; b++)
        free(w->rowblk[b]);
    cgi_ranks_free(w->ranks);
    free(w->rowblk), free(w->rowix.ix), free(w->hosts), free(w->hostix.ix), free(w->quirks), free(w->probed),
        free(w->path), free(w);
}

/* A report that cannot be written leaves no file and is named with the
 * path and the error (outfile.h). */
int cgi_report_end(cgi_report_writer *w, size_t lost)
{
    if (!w) return CG_OK;
    int e = 0;
    char note[1024];
    if (!w->oom && cgi_ranks_finish(w->ranks) != 0) w->oom = 1;
    if (w->oom && w->o.own && w->o.tmp) {
        /* The combined table would be wrong: no report rather than a false one. */
        fclose(w->o.f);
        unlink(w->o.tmp);
        free(w->o.tmp);
    } else {
        if (w->format == CG_REPORT_TEXT)
            cgi_text_end(w->o.f, w, lost);
        else
            cgi_json_end(w->o.f, w->nproc, &w->all, lost, w);
        e = cgi_outfile_close(&w->o, w->path, "report", note, sizeof note);
    }
    int rc = CG_OK;
    if (w->oom)
        rc = cgi_fail(CG_ENOMEM, "cannot write report %s: out of memory", w->path);
    else if (e == EEXIST)
        rc = cgi_fail(CG_EIO, "%s", note);
    else if (e)
        rc = cgi_fail(CG_EIO, "cannot write report %s: %s", w->path, strerror(e));
    cgi_report_free(w);
    return rc;
}

int cgi_report_to(const char *path, const cgi_proc_view *procs, size_t n, size_t lost, cg_report_format format)
{
    cgi_report_writer *w;
    int rc = cgi_report_begin(path, format, &w);
    if (rc != CG_OK) return rc;
    for (size_t i = 0; i < n; i++)
        cgi_report_add(w, &procs[i]);
    return cgi_report_end(w, lost);
}
