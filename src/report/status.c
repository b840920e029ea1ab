/* `callguard status`: what running guarded processes are doing now, from
 * their statistics files alone (report.h, cgi_status_*). Each process is
 * taken from its region into a small summary (its calls in flight, with
 * what the hang page knows of them), then the processes are grouped by
 * what they are doing, the odd ones first: in a job that stopped making
 * progress, the rank that does something else is the one to look at. */
#define _GNU_SOURCE
#include "internal.h"

#include "../common/errors.h"
#include "../common/message.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* How long status waits for the processes' answers (their watchdogs look
 * once a millisecond, or every 100 ms while idle). */
#define CGI_STATUS_WAIT_NS 1000000000u

static void cgi_status_call_line(FILE *out, const cgi_hang_call *e)
{
    fprintf(out, "    tid %d \"", e->tid);
    CGI_TEXT_FIELD(out, e->thread);
    fprintf(out, "\" %s ", e->waiting ? "waiting for the lock of" : "in");
    CGI_TEXT_FIELD(out, e->api);
    fputc(' ', out);
    CGI_TEXT_FIELD(out, e->name);
    cgi_text_args(out, e);
    fprintf(out, " for %.1f s", (double)e->age_ns / 1e9);
    if (e->waiting && e->holder_tid) fprintf(out, ", lock held by tid %d", e->holder_tid);
    int py = strcmp(e->runtime, "cpython") == 0;
    if (e->held == CGI_HELD_YES)
        fputs(py ? ", holding the GIL" : ", holding its runtime", out);
    else if (e->held == CGI_HELD_NO && e->runtime[0])
        fputs(py ? ", GIL not held" : ", runtime not held", out);
    if (e->py_file[0]) fputc(',', out);
    cgi_status_where(out, e);
    fputc('\n', out);
}

static void cgi_status_proc_text(FILE *out, const cgi_status_proc *p)
{
    fprintf(out, "  ");
    if (p->rank >= 0) fprintf(out, "rank %d ", (int)p->rank);
    fprintf(out, "pid %d on ", p->pid);
    CGI_TEXT_FIELD(out, p->host);
    fprintf(out, ", up %.1f s, %" PRIu64 " calls: ", (double)p->up_ns / 1e9, p->calls);
    cgi_text_str(out, p->command, 200);
    fputc('\n', out);
    if (!p->ncalls) fputs("    no guarded call in flight\n", out);
    for (unsigned i = 0; i < p->ncalls; i++) {
        cgi_status_call_line(out, &p->call[i]);
        if (p->behind[i] >= 0) cgi_text_behind(out, &p->call[i], &p->call[p->behind[i]], p->behind_quirk[i]);
    }
    if (p->in_flight > p->ncalls) fprintf(out, "    %u in flight (%u shown)\n", p->in_flight, p->ncalls);
    if (p->watchdog_ago_ns != UINT64_MAX && p->watchdog_ago_ns > 5000000000u)
        fprintf(out, "    (its watchdog last looked %.1f s ago: the lines above may be old)\n",
                (double)p->watchdog_ago_ns / 1e9);
    cgi_status_threads_text(out, p);
}

/* The ranks the launcher's world size names that no process here has. */
static void cgi_status_missing(FILE *out, const cgi_status_proc *v, size_t n)
{
    uint32_t world = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].world_size > world) world = v[i].world_size;
    if (!world || world > 1u << 20) return;
    char *seen = calloc(world, 1);
    if (!seen) return;
    for (size_t i = 0; i < n; i++)
        if (v[i].rank >= 0 && (uint32_t)v[i].rank < world) seen[v[i].rank] = 1;
    size_t missing = 0;
    for (uint32_t r = 0; r < world; r++)
        missing += !seen[r];
    if (missing) {
        fprintf(out, "  missing: %zu of %u ranks (", missing, world);
        size_t said = 0;
        for (uint32_t r = 0; r < world && said < 16; r++)
            if (!seen[r]) fprintf(out, "%s%u", said++ ? ", " : "", r);
        fprintf(out, "%s): not running here, or ended\n", missing > said ? ", ..." : "");
    }
    free(seen);
}

int cgi_status_text(FILE *out, const cgi_status_proc *v, size_t n, const char *where, cgi_status_steps *steps)
{
    cgi_status_grouping gr;
    if (cgi_status_grouped(v, n, &gr) != 0) return -1;
    const size_t *order = gr.order, ng = gr.ng;
    const cgi_status_group *groups = gr.groups;
    fprintf(out, "callguard status: %zu process%s %s\n", n, n == 1 ? "" : "es", where);
    for (size_t g = 0; g < ng && n > 1; g++) {
        const cgi_status_proc *p = &v[order[groups[g].first]];
        fputs("  ", out);
        cgi_status_members(out, v, order, &groups[g]);
        if (!p->ncalls) {
            fputs(": no guarded call in flight\n", out);
            continue;
        }
        fprintf(out, ": %s ", p->call[0].waiting ? "waiting for the lock of" : "in");
        CGI_TEXT_FIELD(out, p->call[0].name);
        cgi_status_where(out, &p->call[0]);
        fprintf(out, ", %.1f s\n", (double)groups[g].oldest_ns / 1e9);
    }
    cgi_status_missing(out, v, n);
    int rc = steps ? cgi_status_steps_write(out, steps, 0) : 0;
    for (size_t g = 0; g < ng; g++)
        for (size_t i = 0; i < groups[g].n; i++)
            cgi_status_proc_text(out, &v[order[groups[g].first + i]]);
    cgi_status_grouping_free(&gr);
    return rc;
}

/* ---- JSON ---------------------------------------------------------------------- */

static void cgi_status_call_json(FILE *out, const cgi_hang_call *e, const cgi_hang_call *behind, const char *quirk)
{
    fputs("{\"api\": ", out);
    cgi_json_str(out, e->api);
    cgi_json_field_str(out, "name", e->name);
    fprintf(out, ", \"tid\": %d", e->tid);
    cgi_json_field_str(out, "thread", e->thread);
    fprintf(out, ", \"age_ns\": %" PRIu64 ", \"waiting\": %s", e->age_ns, e->waiting ? "true" : "false");
    fputs(", \"lock_held_by\": ", out);
    e->waiting && e->holder_tid ? fprintf(out, "%d", e->holder_tid) : fputs("null", out);
    cgi_json_hang_runtime(out, e);
    cgi_json_hang_args(out, e);
    fputs(", \"python\": ", out);
    cgi_json_hang_python(out, e);
    cgi_json_behind(out, behind, quirk);
    fputc('}', out);
}

int cgi_status_json(FILE *out, const cgi_status_proc *v, size_t n, cgi_status_steps *steps)
{
    cgi_status_grouping gr;
    if (cgi_status_grouped(v, n, &gr) != 0) return -1;
    const size_t *order = gr.order, ng = gr.ng;
    const cgi_status_group *groups = gr.groups;
    fputs("{\"callguard_status\": 1, \"groups\": [", out);
    for (size_t g = 0; g < ng; g++) {
        fprintf(out, "%s\n  {\"pids\": [", g ? "," : "");
        for (size_t i = 0; i < groups[g].n; i++)
            fprintf(out, "%s%d", i ? ", " : "", v[order[groups[g].first + i]].pid);
        fputs("], \"ranks\": [", out);
        for (size_t i = 0, k = 0; i < groups[g].n; i++)
            if (v[order[groups[g].first + i]].rank >= 0)
                fprintf(out, "%s%d", k++ ? ", " : "", (int)v[order[groups[g].first + i]].rank);
        fprintf(out, "], \"oldest_ns\": %" PRIu64 "}", groups[g].oldest_ns);
    }
    fputs("],\n \"processes\": [", out);
    for (size_t i = 0; i < n; i++) {
        const cgi_status_proc *p = &v[order[i]];
        fprintf(out, "%s\n  {\"pid\": %d, \"rank\": ", i ? "," : "", p->pid);
        p->rank >= 0 ? fprintf(out, "%d", (int)p->rank) : fputs("null", out);
        fputs(", \"world_size\": ", out);
        p->world_size ? fprintf(out, "%u", p->world_size) : fputs("null", out);
        cgi_json_field_str(out, "host", p->host);
        cgi_json_field_str(out, "command", p->command);
        fprintf(out, ", \"up_ns\": %" PRIu64 ", \"calls\": %" PRIu64 ", \"in_flight_count\": %u, \"in_flight\": [",
                p->up_ns, p->calls, p->in_flight);
        for (unsigned k = 0; k < p->ncalls; k++) {
            fputs(k ? ",\n    " : "\n    ", out);
            cgi_status_call_json(out, &p->call[k], p->behind[k] >= 0 ? &p->call[p->behind[k]] : NULL,
                                 p->behind_quirk[k]);
        }
        fputc(']', out);
        cgi_status_threads_json(out, p);
        fputc('}', out);
    }
    fputs("]", out);
    int rc = steps ? cgi_status_steps_write(out, steps, 1) : 0;
    fputs("}\n", out);
    cgi_status_grouping_free(&gr);
    return rc;
}

/* ---- the files ----------------------------------------------------------------- */

/* One statistics file into r: the caller's own, a regular file, read
 * whole by pread (stats_dir.c); 0, or -1 after one line on stderr. */
static int cgi_status_read(const char *path, cgi_stats_region *r)
{
    char why[200];
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW), rc = -1;
    struct stat st;
    if (fd < 0)
        snprintf(why, sizeof why, "cannot open it: %s", strerror(errno));
    else if (fstat(fd, &st) != 0 || st.st_uid != geteuid())
        snprintf(why, sizeof why, "not yours (owner uid %d): not read", fd >= 0 ? (int)st.st_uid : -1);
    else
        rc = cgi_stats_read_fd(fd, r, why, sizeof why);
    if (fd >= 0) close(fd);
    if (rc != 0) cgi_say("status: %s: %s; left out", path, why);
    return rc;
}

/* Asks every process for its Python threads (depth frames each), then
 * waits at most CGI_STATUS_WAIT_NS for them all; NULL where not asked. */
static cgi_status_threads **cgi_status_ask_all(const char *const *paths, size_t n, int depth)
{
    cgi_status_threads **t = depth > 0 ? calloc(n ? n : 1, sizeof *t) : NULL;
    for (size_t i = 0; t && i < n; i++)
        t[i] = cgi_status_threads_ask(paths[i], depth);
    if (t) cgi_status_threads_wait(t, n, CGI_STATUS_WAIT_NS);
    return t;
}

/* ---- in brief (--stuck, --watch) ------------------------------------------------ */

static void cgi_status_brief_of(const cgi_status_proc *p, cg_status_brief *b)
{
    memset(b, 0, sizeof *b);
    b->pid = p->pid, b->rank = p->rank, b->world_size = p->world_size;
    snprintf(b->host, sizeof b->host, "%s", p->host);
    b->calls = p->calls, b->in_flight = p->in_flight;
    const cgi_hang_call *old = NULL;
    for (unsigned i = 0; i < p->ncalls; i++)
        if (!old || p->call[i].age_ns > old->age_ns) old = &p->call[i];
    if (!old) return;
    b->oldest_ns = old->age_ns ? old->age_ns : 1;
    snprintf(b->api, sizeof b->api, "%s", old->api);
    snprintf(b->name, sizeof b->name, "%s", old->name);
    b->waiting = old->waiting != 0;
    if (old->py_file[0])
        snprintf(b->where, sizeof b->where, "%.120s:%d%s%.60s", old->py_file, old->py_line,
                 old->py_func[0] ? " in " : "", old->py_func);
}

int cg_status_briefs(const char *const *stats_paths, size_t npaths, cg_status_brief *out, size_t *nout, int quiet)
{
    *nout = 0;
    cgi_stats_region *r = malloc(sizeof *r);
    if (!r) return cgi_fail(CG_ENOMEM, "status: out of memory");
    for (size_t i = 0; i < npaths; i++) {
        char why[200];
        int fd = open(stats_paths[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW), rc = -1;
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid()) rc = cgi_stats_read_fd(fd, r, why, sizeof why);
        if (fd >= 0) close(fd);
        if (rc != 0) {
            if (!quiet) cgi_status_read(stats_paths[i], r); /* says why */
            continue;
        }
        struct timespec ts;
        cgi_status_proc p;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        cgi_status_take(r, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, &p);
        cgi_status_brief_of(&p, &out[(*nout)++]);
    }
    free(r);
    return CG_OK;
}

int cg_status_write(const char *const *stats_paths, size_t npaths, const char *where, int fd, cg_report_format format)
{
    return cg_status_write_threads(stats_paths, npaths, where, fd, format, 0);
}

int cg_status_write_threads(const char *const *stats_paths, size_t npaths, const char *where, int fd,
                            cg_report_format format, int depth)
{
    cgi_stats_region *r = malloc(sizeof *r);
    cgi_status_proc *v = calloc(npaths ? npaths : 1, sizeof *v);
    int dup_fd = dup(fd);
    FILE *out = dup_fd >= 0 ? fdopen(dup_fd, "w") : NULL;
    if (!r || !v || !out) {
        if (out)
            fclose(out);
        else if (dup_fd >= 0)
            close(dup_fd);
        free(r), free(v);
        return cgi_fail(CG_ENOMEM, "status: out of memory");
    }
    /* First the question to every process, answered while the rest is read. */
    cgi_status_threads **threads = cgi_status_ask_all(stats_paths, npaths, depth);
    size_t n = 0, len = 0;
    char *text = NULL;
    FILE *mem = format == CG_REPORT_JSON || format == CG_REPORT_PROMETHEUS ? NULL : open_memstream(&text, &len);
    cgi_prom *prom = format == CG_REPORT_PROMETHEUS ? cgi_prom_begin() : NULL;
    /* The collectives out of step: left out (NULL) when out of memory, as the rest needs none of it. */
    cgi_status_steps *steps = cgi_status_steps_new();
    for (size_t i = 0; i < npaths; i++) {
        if (cgi_status_read(stats_paths[i], r) != 0) continue;
        if (steps && cgi_status_steps_add(steps, r) != 0) cgi_status_steps_free(steps), steps = NULL;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        cgi_status_take(r, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec, &v[n]);
        v[n].threads = threads ? threads[i] : NULL;
        if (prom) cgi_prom_add(prom, r, &v[n]);
        n++;
    }
    int rc = -1;
    if (prom) {
        rc = cgi_prom_end(prom, out, steps);
    } else if (format == CG_REPORT_JSON) {
        rc = cgi_status_json(out, v, n, steps);
    } else if (mem) {
        /* Fitted to the width, a long line going on indented. */
        rc = cgi_status_text(mem, v, n, where ? where : "", steps);
        if (fclose(mem) != 0) rc = -1;
        if (rc == 0) cgi_text_fit(out, text, len, cgi_text_width(out));
        free(text);
    }
    if (fclose(out) != 0) rc = -1;
    cgi_status_steps_free(steps);
    for (size_t i = 0; threads && i < npaths; i++)
        cgi_status_threads_free(threads[i]);
    free(threads), free(r), free(v);
    return rc == 0 ? CG_OK : cgi_fail(CG_EIO, "status: cannot write: %s", strerror(errno));
}
