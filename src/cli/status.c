/* `callguard status [DIR/ | PID ...]`: what running guarded processes are
 * doing now, from their statistics files (status_files.c finds them;
 * libcallguard reads and writes them: cg_status_write). With --stuck AFTER
 * a probe (exit 0 healthy, 1 stuck), with --watch a line per change, with
 * --format prometheus the text exposition format. Nothing here signals,
 * traces or pauses a process: a hung one answers as well. Its Python
 * threads are asked for through the file, which the process's own
 * watchdog answers (cg_status_write_threads). */
#define _GNU_SOURCE
#include "../common/duration.h"
#include "../common/message.h"
#include "../common/stats_file.h"
#include "cli.h"
#include "run.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* --depth's value: 0 (no threads) to CGI_THREADS_MAX_DEPTH; -1 when it is none of them. */
static int status_depth(const char *v)
{
    char *end;
    errno = 0;
    long d = v ? strtol(v, &end, 10) : -1;
    return v && *v && !*end && !errno && d >= 0 && d <= CGI_THREADS_MAX_DEPTH ? (int)d : -1;
}

/* status's options; targets: the pids and folders named (none: all). */
typedef struct status_opts {
    cg_report_format format;
    int depth, watch, stuck; /* stuck: --stuck given */
    uint64_t after_ms;
    char **targets;
    int ntargets;
} status_opts;

/* The value of option argv[*i] ("--opt V" or "--opt=V"), or NULL. */
static const char *status_value(int argc, char **argv, int *i, const char *opt)
{
    size_t n = strlen(opt);
    if (strncmp(argv[*i], opt, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    return !argv[*i][n] && *i + 1 < argc ? argv[++*i] : argv[*i][n] ? NULL : "";
}

/* -1 when the options are good, else the exit status. */
static int status_parse(int argc, char **argv, status_opts *o)
{
    *o = (status_opts){.format = CG_REPORT_TEXT, .depth = 16, .after_ms = RUN_STUCK_DEFAULT_MS};
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *v;
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return cli_help("status");
        if (!strcmp(argv[i], "--json")) {
            o->format = CG_REPORT_JSON;
        } else if (!strcmp(argv[i], "--all")) {
            o->depth = CGI_THREADS_MAX_DEPTH;
        } else if (!strcmp(argv[i], "--watch")) {
            o->watch = 1;
        } else if ((v = status_value(argc, argv, &i, "--depth"))) {
            if ((o->depth = status_depth(v)) < 0)
                return cli_usage_error("status: --depth '%s': expected a number of frames from 0 (no threads) to %d", v,
                                       CGI_THREADS_MAX_DEPTH);
        } else if ((v = status_value(argc, argv, &i, "--stuck"))) {
            o->stuck = 1;
            if (!cgi_parse_duration(v, CGI_STUCK_MIN_MS, CGI_STUCK_MAX_MS, &o->after_ms))
                return cli_usage_error("status: --stuck '%s': expected a duration from 1s to 24h with its unit "
                                       "(1500ms, 30s, 5m, 1h)",
                                       v);
        } else if ((v = status_value(argc, argv, &i, "--format"))) {
            if (!strcmp(v, "text") || !strcmp(v, "json") || !strcmp(v, "prometheus"))
                o->format = v[0] == 't' ? CG_REPORT_TEXT : v[0] == 'j' ? CG_REPORT_JSON : CG_REPORT_PROMETHEUS;
            else
                return cli_usage_error("status: --format '%s': expected text, json or prometheus", v);
        } else {
            return cli_usage_error("status: unknown option '%s' (callguard status --help lists them)", argv[i]);
        }
    }
    if (o->watch && o->format == CG_REPORT_PROMETHEUS)
        return cli_usage_error("status: --watch writes lines (or JSON with --json), not --format prometheus");
    o->targets = argv + i, o->ntargets = argc - i;
    for (int k = 0; k < o->ntargets; k++) {
        const char *a = o->targets[k];
        struct stat st;
        if (!(a[0] && strspn(a, "0123456789") == strlen(a) && strlen(a) < 10) &&
            (stat(a, &st) != 0 || !S_ISDIR(st.st_mode)))
            return cli_usage_error("status: '%s': expected a pid or a report folder (run --report DIR/)", a);
    }
    return -1;
}

/* The files of the processes the targets name (quiet: nothing said). */
static void status_gather(const status_opts *o, status_files *f, const char *host, int quiet)
{
    memset(f, 0, sizeof *f);
    f->quiet = quiet;
    if (!o->ntargets) status_add_all(f);
    for (int k = 0; k < o->ntargets; k++) {
        const char *a = o->targets[k];
        if (strspn(a, "0123456789") == strlen(a))
            status_add_pid(f, (pid_t)atoi(a), !quiet);
        else if (status_add_folder(f, a) == 0 && !quiet)
            cgi_say("status: %s: no run of it is alive on %s%s", a, host,
                    f->nended ? " (some ended: callguard report DIR/)" : "");
    }
}

/* Other hosts' stuck runs (their notes in a shared report folder). */
static void status_elsewhere(const status_files *f)
{
    for (const char *p = f->elsewhere; *p;) {
        size_t n = strcspn(p, "\n");
        printf("callguard status: stuck on another host (its run's note in the folder): %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

/* --stuck AFTER: 0 when no call is in flight AFTER, 1 (the view written)
 * when one is. */
static int status_stuck(const status_opts *o, const status_files *f, const char *where)
{
    stuck_look l;
    if (stuck_look_at(&l, f, o->after_ms * 1000000ull, 0) != 0) return cgi_say("status: out of memory"), 2;
    char after[32], head[600];
    stuck_duration(o->after_ms, after, sizeof after);
    stuck_headline(&l, head, sizeof head);
    int stuck = l.nstuck > 0 || f->nelsewhere;
    if (o->format == CG_REPORT_JSON) {
        char *view = stuck ? stuck_view(f, where, CG_REPORT_JSON) : NULL;
        printf("{\"callguard_stuck\": 1, \"stuck\": %s, \"after\": \"%s\", \"after_ms\": %llu, \"headline\": ",
               stuck ? "true" : "false", after, (unsigned long long)o->after_ms);
        stuck_json_str(stdout, head);
        fputs(", \"processes\": ", stdout);
        stuck_json_list(stdout, &l);
        fputs(", \"elsewhere\": [", stdout);
        for (const char *p = f->elsewhere; *p;) {
            size_t n = strcspn(p, "\n");
            char line[600];
            snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), p);
            fputs(p == f->elsewhere ? "" : ", ", stdout), stuck_json_str(stdout, line);
            p += n + (p[n] == '\n');
        }
        printf("], \"view\": %s}\n", view ? view : "null");
        free(view);
    } else if (o->format == CG_REPORT_PROMETHEUS) {
        cg_status_write((const char *const *)f->v, f->n, where, 1, CG_REPORT_PROMETHEUS);
    } else if (stuck) {
        if (l.nstuck) printf("callguard status: stuck over --stuck %s: %s\n", after, head);
        status_elsewhere(f);
        fflush(stdout);
        if (f->n) cg_status_write((const char *const *)f->v, f->n, where, 1, CG_REPORT_TEXT);
    } else {
        printf("callguard status: nothing stuck: %zu process%s %s, no call in flight over %s\n", l.n,
               l.n == 1 ? "" : "es", where, after);
    }
    stuck_look_free(&l);
    return stuck;
}

/* ---- --watch ---------------------------------------------------------------------- */

/* A process as the last look saw it. */
typedef struct watch_proc {
    cg_status_brief b;
    unsigned long long stuck; /* what it was stuck in (0: not stuck) */
} watch_proc;

typedef struct watch_state {
    watch_proc *v;
    size_t n;
    char *missing; /* by rank, of the world size: 1 seen, 2 said missing */
    uint32_t world;
    int json;
} watch_state;

/* One event: a line, or a JSON object a line. b: the process (NULL: a rank alone). */
static void watch_event(const watch_state *w, const char *event, const cg_status_brief *b, int rank)
{
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    long long ms = (long long)rt.tv_sec * 1000 + rt.tv_nsec / 1000000;
    int stuck = !strcmp(event, "stuck");
    if (w->json) {
        printf("{\"event\": \"%s\", \"unix_ms\": %lld, \"rank\": ", event, ms);
        b && b->rank < 0 ? fputs("null", stdout) : printf("%d", b ? b->rank : rank);
        if (b) {
            printf(", \"pid\": %d, \"host\": ", b->pid);
            stuck_json_str(stdout, b->host);
        }
        if (b && stuck) {
            fputs(", \"api\": ", stdout);
            stuck_json_str(stdout, b->api);
            fputs(", \"name\": ", stdout);
            stuck_json_str(stdout, b->name);
            printf(", \"age_ns\": %llu, \"where\": ", b->oldest_ns);
            b->where[0] ? stuck_json_str(stdout, b->where) : (void)fputs("null", stdout);
        }
        fputs("}\n", stdout);
    } else {
        struct tm tm;
        char when[16];
        localtime_r(&rt.tv_sec, &tm);
        strftime(when, sizeof when, "%H:%M:%S", &tm);
        if (!b)
            printf("%s rank %d missing (of %u ranks): not running here, or ended\n", when, rank, w->world);
        else if (stuck)
            printf("%s %s%d (pid %d on %s) stuck in %s%s%s for %.1f s\n", when, b->rank >= 0 ? "rank " : "pid ",
                   b->rank >= 0 ? b->rank : b->pid, b->pid, b->host, b->name, b->where[0] ? " at " : "", b->where,
                   (double)b->oldest_ns / 1e9);
        else
            printf("%s %s%d (pid %d on %s) %s\n", when, b->rank >= 0 ? "rank " : "pid ",
                   b->rank >= 0 ? b->rank : b->pid, b->pid, b->host, event[0] == 'm' ? "moved on" : "exited");
    }
    fflush(stdout);
}

/* One look compared with the last: the events said, the state kept. */
static void watch_compare(watch_state *w, const stuck_look *l)
{
    watch_proc *now = calloc(l->n ? l->n : 1, sizeof *now);
    if (!now) return;
    uint32_t world = w->world;
    for (size_t i = 0; i < l->n; i++) {
        const cg_status_brief *b = &l->v[i];
        now[i].b = *b;
        now[i].stuck = b->oldest_ns && b->oldest_ns >= l->after_ns ? l->sig[i] : 0;
        if (b->world_size > world && b->world_size <= 1u << 20) world = b->world_size;
        const watch_proc *was = NULL;
        for (size_t k = 0; k < w->n && !was; k++)
            if (w->v[k].b.pid == b->pid) was = &w->v[k];
        if (now[i].stuck && (!was || was->stuck != now[i].stuck)) watch_event(w, "stuck", b, 0);
        if (!now[i].stuck && was && was->stuck) watch_event(w, "moved_on", b, 0);
    }
    for (size_t k = 0; k < w->n; k++) {
        size_t i = 0;
        while (i < l->n && l->v[i].pid != w->v[k].b.pid)
            i++;
        if (i == l->n) watch_event(w, "exited", &w->v[k].b, 0);
    }
    free(w->v);
    w->v = now, w->n = l->n;
    if (world != w->world) {
        char *m = calloc(world, 1);
        if (!m) return;
        if (w->missing) memcpy(m, w->missing, w->world);
        free(w->missing);
        w->missing = m, w->world = world;
    }
    /* A rank the world size names that was never here (one that was and
     * is not any more exited): said once. missing[r]: 1 seen, 2 said. */
    for (uint32_t r = 0; r < w->world && l->n; r++) {
        for (size_t i = 0; i < l->n && !w->missing[r]; i++)
            w->missing[r] = l->v[i].rank == (int)r;
        if (!w->missing[r]) watch_event(w, "missing", NULL, (int)r), w->missing[r] = 2;
    }
}

/* Until every process watched has ended: a look every RUN_STUCK_LOOK_MS. */
static int status_watch(const status_opts *o, const char *host)
{
    watch_state w = {.json = o->format == CG_REPORT_JSON};
    int seen = 0;
    for (;;) {
        status_files f;
        status_gather(o, &f, host, seen);
        stuck_look l;
        if (stuck_look_at(&l, &f, o->after_ms * 1000000ull, 1) != 0) return status_files_free(&f), 1;
        status_files_free(&f);
        if (!seen && !l.n) {
            if (!o->ntargets) cgi_say("status: no process of yours runs under callguard on %s", host);
            stuck_look_free(&l);
            return 1;
        }
        seen = 1;
        watch_compare(&w, &l);
        int left = l.n > 0;
        stuck_look_free(&l);
        if (!left) break;
        struct timespec ts = {0, RUN_STUCK_LOOK_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    free(w.v), free(w.missing);
    return 0;
}

int cli_cmd_status(int argc, char **argv)
{
    status_opts o;
    int rc;
    if ((rc = status_parse(argc, argv, &o)) >= 0) return rc;
    char host[256] = "", where[300];
    gethostname(host, sizeof host - 1);
    snprintf(where, sizeof where, "on %s", host[0] ? host : "this host");
    if (o.watch) return status_watch(&o, host);
    status_files f;
    status_gather(&o, &f, host, 0);
    if (!f.n && o.stuck && f.nelsewhere) {
        rc = status_stuck(&o, &f, where); /* stuck on another host alone */
        status_files_free(&f);
        return rc;
    }
    if (!f.n) {
        if (!f.refused && !o.ntargets) cgi_say("status: no process of yours runs under callguard on %s", host);
        status_files_free(&f);
        /* A probe asks whether something is stuck: nothing runs, nothing is. */
        return o.stuck && !f.refused ? 0 : 1;
    }
    if (o.stuck) {
        rc = status_stuck(&o, &f, where);
        status_files_free(&f);
        return rc;
    }
    rc = cg_status_write_threads((const char *const *)f.v, f.n, where, 1, o.format,
                                 o.format == CG_REPORT_PROMETHEUS ? 0 : o.depth);
    if (o.format == CG_REPORT_TEXT && f.nended)
        printf("  ended, with a report in the folder: rank%s %s\n", f.nended == 1 ? "" : "s", f.ended);
    if (o.format == CG_REPORT_TEXT) status_elsewhere(&f);
    int refused = f.refused;
    status_files_free(&f);
    return rc == CG_OK && !refused ? 0 : 1;
}
