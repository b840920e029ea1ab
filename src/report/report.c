/* Reports: JSON for machines (schema in docs/report.md), a table for
 * people. Both are written from statistics regions, so one process's report
 * at exit and the CLI's merge of a whole process tree share this code: a
 * report is begun, each process added (written, and folded into the
 * combined table), and ended (the advice and the totals). */
#define _GNU_SOURCE
#include "internal.h"

#include "../common/errors.h"
#include "json_lex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The `stuck` member of the reports written from now on (cg_report_set_stuck). */
static char *cgi_stuck_next;

int cg_report_set_stuck(const char *json_object)
{
    char *copy = json_object ? strdup(json_object) : NULL;
    if (json_object && !copy) return cgi_fail(CG_ENOMEM, "out of memory");
    free(cgi_stuck_next);
    cgi_stuck_next = copy;
    return CG_OK;
}

/* The text's line of a `stuck` member: its headline, AFTER and the action. */
typedef struct cgi_stuck_text {
    char headline[400], after[32], action[16];
    int aborted;
} cgi_stuck_text;

static void cgi_stuck_member(cgi_json *j, const char *key, void *ctx)
{
    cgi_stuck_text *t = ctx;
    if (strcmp(key, "headline") == 0)
        cgi_lex_str(j, t->headline, sizeof t->headline);
    else if (strcmp(key, "after") == 0)
        cgi_lex_str(j, t->after, sizeof t->after);
    else if (strcmp(key, "action") == 0)
        cgi_lex_str(j, t->action, sizeof t->action);
    else if (strcmp(key, "aborted") == 0)
        t->aborted = cgi_read_bool(j);
    else
        cgi_lex_skip(j);
}

int cgi_report_keep_stuck(cgi_report_writer *w, const char *json, size_t len)
{
    if (w->stuck) return 0;
    cgi_json j = {.s = json, .end = json + len};
    cgi_stuck_text t = {.headline = ""};
    cgi_lex_ws(&j);
    if (j.s < j.end && *j.s == '{') cgi_read_object(&j, cgi_stuck_member, &t);
    cgi_lex_ws(&j);
    if (j.err || j.s != j.end || !t.headline[0]) return -1;
    char *line = NULL;
    if (asprintf(&line, "%s (over --stuck %s%s)", t.headline, t.after[0] ? t.after : "?",
                 t.aborted                          ? "; --on-stuck abort ended the job"
                 : strcmp(t.action, "command") == 0 ? "; --on-stuck ran its command"
                                                    : "") < 0)
        return -1;
    if (!(w->stuck = strndup(json, len))) return free(line), -1;
    w->stuck_line = line;
    return 0;
}

int cgi_report_begin(const char *path, cg_report_format format, cgi_report_writer **out)
{
    *out = NULL;
    if (!path || !*path) return cgi_fail(CG_EINVAL, "report path is empty: expected a file name or '-'");
    if (format != CG_REPORT_JSON && format != CG_REPORT_TEXT && format != CG_REPORT_TEXT_ALL &&
        format != CG_REPORT_ADVICE)
        return cgi_fail(CG_EINVAL,
                        "report format %d: expected CG_REPORT_JSON, CG_REPORT_TEXT, CG_REPORT_TEXT_ALL or "
                        "CG_REPORT_ADVICE",
                        (int)format);
    cgi_report_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path)) || !(w->ranks = cgi_ranks_new())) {
        if (w) free(w->path);
        free(w);
        return cgi_fail(CG_ENOMEM, "out of memory");
    }
    w->format = format;
    /* The text's sections wait in the spool for the summary that leads them. */
    int e = format == CG_REPORT_JSON ? 0 : cgi_spool_open(&w->spool);
    if (e || (e = cgi_outfile_open(path, &w->o)) != 0) {
        cgi_spool_drop(&w->spool);
        cgi_ranks_free(w->ranks), free(w->path), free(w);
        return cgi_fail(e == ENOMEM ? CG_ENOMEM : CG_EIO, "cannot write report %s: %s", path, strerror(e));
    }
    if (cgi_stuck_next) cgi_report_keep_stuck(w, cgi_stuck_next, strlen(cgi_stuck_next));
    if (format == CG_REPORT_JSON) cgi_json_begin(w->o.f);
    if (format == CG_REPORT_TEXT || format == CG_REPORT_ADVICE) w->width = cgi_text_width(w->o.f);
    *out = w;
    return CG_OK;
}

void cgi_report_sources(cgi_report_writer *w, const char *const *paths, size_t n)
{
    w->sources = paths, w->nsources = n;
}

void cgi_report_exits(cgi_report_writer *w, const cg_proc_exit *exits, size_t n) { w->exits = exits, w->nexits = n; }

/* A process that ended with calls in flight, for the view of what the
 * job's processes were doing at the end (the summary, JSON's
 * "in_flight_groups"). */
static void cgi_report_keep_ended(cgi_report_writer *w, const cgi_stats_region *r)
{
    int inside = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS && !inside; i++)
        inside = cgi_in_flight(&r->slot[i]);
    if (!inside) return;
    if (w->nended == w->endedcap) {
        size_t cap = w->endedcap ? 2 * w->endedcap : 8;
        cgi_status_proc *v = cap <= CGI_REPORT_MAX_ENDED ? realloc(w->ended, cap * sizeof *v) : NULL;
        if (!v) {
            w->ended_more++;
            return;
        }
        w->ended = v, w->endedcap = cap;
    }
    cgi_status_take(r, 0, &w->ended[w->nended++]);
}

void cgi_report_not_counted(cgi_report_writer *w, const cgi_not_counted *nc)
{
    cgi_not_counted *m = &w->not_counted;
    m->processes += nc->processes;
    if (nc->entry_points <= m->entry_points) return;
    m->entry_points = nc->entry_points, m->nnames = nc->nnames;
    memcpy(m->names, nc->names, sizeof m->names);
}

/* A process that made no counted call is not listed; the entry points its
 * policy leaves uncounted are said all the same (it may have called them). */
static void cgi_report_unlisted(cgi_report_writer *w, const cgi_proc_view *p)
{
    cgi_not_counted nc = {.processes = 1};
    const cgi_stats_region *r = p->region;
    for (uint32_t k = 0; k < cgi_nrec(r); k++) {
        if (!cgi_left_uncounted(p, k)) continue;
        if (nc.nnames < CGI_NOT_COUNTED_NAMES) snprintf(nc.names[nc.nnames++], CGI_NAME_MAX, "%s", r->r[k].name);
        nc.entry_points++;
    }
    if (nc.entry_points) cgi_report_not_counted(w, &nc);
}

void cgi_report_add(cgi_report_writer *w, const cgi_proc_view *p)
{
    cgi_totals t = cgi_proc_totals(p->region);
    if (t.calls == 0) {
        cgi_report_unlisted(w, p);
        return;
    }
    if (w->format == CG_REPORT_JSON) {
        cgi_json_process(w->o.f, p, &t, w->nproc);
    } else if (!w->oom) {
        cgi_summary_add(&w->sum, p);
        if (w->format != CG_REPORT_ADVICE &&
            (w->text_err = cgi_text_process(w->spool.f, p, &t, w->width, &w->said)) == 0)
            w->text_err = cgi_spool_bound(&w->spool);
        if (w->text_err) w->oom = 1; /* the sections would be missing one: no report rather than a false one */
    }
    cgi_report_keep_ended(w, p->region);
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
    cgi_spool_drop(&w->spool);
    cgi_ranks_free(w->ranks);
    free(w->ended), free(w->rowblk), free(w->rowix.ix), free(w->hosts), free(w->hostix.ix), free(w->quirks),
        free(w->probed), free(w->path), free(w->stuck), free(w->stuck_line), free(w);
}

/* The text, once every process is in: the summary and the tables made in
 * memory, then written with the spooled sections after them, every line
 * fitted to the width. Nothing is written unless all of it was made (on
 * stderr too: no report rather than a false one). 0, or an errno. */
static int cgi_text_end(cgi_report_writer *w, size_t lost)
{
    char *head = NULL, *tail = NULL;
    size_t hlen = 0, tlen = 0;
    FILE *h = open_memstream(&head, &hlen), *t = open_memstream(&tail, &tlen);
    int e = !h || !t ? ENOMEM : 0;
    if (!e && w->format == CG_REPORT_ADVICE) {
        e = cgi_advice_text(h, w, 1);
    } else if (!e) {
        e = cgi_summary_write(h, w, lost);
        if (!e && !w->width)
            fputs("callguard: every row and column (--all): lines as wide as they need, more than 100 columns "
                  "(less -S shows them unwrapped)\n",
                  h);
        if (!e) e = cgi_text_tables(h, w);
        if (!e) e = cgi_advice_text(t, w, 0);
        if (!e) cgi_text_totals(t, w, lost);
    }
    if (h && fclose(h) != 0 && !e) e = ENOMEM;
    if (t && fclose(t) != 0 && !e) e = ENOMEM;
    if (!e) {
        /* Sections that fold where the job has ranks (text_table.c). */
        size_t ranks, hosts, unranked;
        cgi_ranks_counts(w->ranks, &ranks, &hosts, &unranked);
        w->spool.folds = (ranks >= 1 ? CGI_FOLD_UNRANKED : 0u) | (ranks >= 2 ? CGI_FOLD_RANKED : 0u);
        cgi_text_fit(w->o.f, head, hlen, w->width);
        e = cgi_spool_drain(&w->spool, w->o.f, w->width);
        if (!e) cgi_text_fit(w->o.f, tail, tlen, w->width);
    }
    free(head), free(tail);
    return e;
}

/* A report that cannot be written leaves no file and is named with the
 * path and the error (outfile.h). */
int cgi_report_end(cgi_report_writer *w, size_t lost)
{
    if (!w) return CG_OK;
    int e = 0;
    char note[1024];
    if (!w->oom && cgi_ranks_finish(w->ranks) != 0) w->oom = 1;
    if (!w->oom && w->format != CG_REPORT_JSON && (w->text_err = cgi_text_end(w, lost)) != 0) w->oom = 1;
    if (w->oom && w->o.own && w->o.tmp) {
        /* The combined table would be wrong: no report rather than a false one. */
        fclose(w->o.f);
        unlink(w->o.tmp);
        free(w->o.tmp);
    } else {
        if (w->format == CG_REPORT_JSON) cgi_json_end(w->o.f, w->nproc, &w->all, lost, w);
        e = cgi_outfile_close(&w->o, w->path, "report", note, sizeof note);
    }
    int rc = CG_OK;
    if (w->oom && w->text_err && w->text_err != ENOMEM)
        rc = cgi_fail(CG_EIO, "cannot write report %s: its processes' sections could not be kept aside: %s", w->path,
                      strerror(w->text_err));
    else if (w->oom)
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
