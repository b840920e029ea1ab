/* callguard report [OPTIONS] FILE.json|DIR/ ...: saved reports printed
 * again, merged into one. A folder stands for its *.json files, as
 * `callguard run --report DIR/` leaves them (one per rank of a job); an
 * argument that starts with '-' is an option, and one not known here is
 * refused rather than read as a file. */
#define _GNU_SOURCE
#include "cli.h"
#include "../common/message.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct report_files {
    char **v;
    size_t n, cap;
} report_files;

/* Whether stdout is a pipe its reader closed (`callguard report F | head`):
 * a write end without readers polls as an error. */
static int report_reader_gone(void)
{
    struct pollfd p = {.fd = STDOUT_FILENO, .events = 0};
    return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

/* Ends as a tool whose reader went away does, quietly, by SIGPIPE (the
 * write said EPIPE: the signal was ignored). A file's failure is never
 * this: it stays loud, with its error and status 2. */
static void report_end_as_pipe_closed(void)
{
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_UNBLOCK, &pipe, NULL);
    raise(SIGPIPE);
    cli_exit(128 + SIGPIPE);
}

static void report_push(report_files *f, char *path)
{
    if (!path) exit(1);
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 16;
        char **more = realloc(f->v, cap * sizeof *more);
        if (!more) exit(1);
        f->v = more, f->cap = cap;
    }
    f->v[f->n++] = path;
}

static int report_is_json(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 5 && strcmp(e->d_name + n - 5, ".json") == 0;
}

/* The folder's *.json files, in version order (rank2 before rank10). An
 * empty one is a report still being written, or one that failed: left out,
 * and said. Returns 0, or 2 when the folder holds no report. */
static int report_add_folder(report_files *f, const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, report_is_json, versionsort);
    if (n < 0) return cli_usage_error("report: %s: cannot read the folder: %m", dir);
    size_t before = f->n, len = strlen(dir);
    for (int i = 0; i < n; i++) {
        char *path;
        if (asprintf(&path, "%s%s%s", dir, len && dir[len - 1] == '/' ? "" : "/", names[i]->d_name) < 0) exit(1);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            free(path);
        else if (st.st_size == 0)
            cgi_say("report: %s is empty (its run is still going, or its report failed): left out", path), free(path);
        else
            report_push(f, path);
        free(names[i]);
    }
    free(names);
    if (f->n == before) return cli_usage_error("report: %s: no *.json report in this folder", dir);
    return 0;
}

typedef struct report_opts {
    const char *json;
    int all, advice;
} report_opts;

/* One option at argv[*i]; returns -1 to go on, else the exit status. */
static int report_option(int argc, char **argv, int *i, report_opts *o)
{
    const char *a = argv[*i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) return cli_help("report");
    if (!strcmp(a, "--all")) return o->all = 1, -1;
    if (!strcmp(a, "--advice")) return o->advice = 1, -1;
    if (!strcmp(a, "--json") || !strncmp(a, "--json=", 7)) {
        const char *v = a[6] == '=' ? a + 7 : *i + 1 < argc ? argv[++*i] : NULL;
        if (!v || !*v) return cli_usage_error("report: --json needs a file name");
        return o->json = v, -1;
    }
    if (strstr(a, "width") || strstr(a, "wide") || strstr(a, "col"))
        return cli_usage_error("report: unknown option '%s': set COLUMNS for the width", a);
    return cli_usage_error("report: unknown option '%s': expected --all, --advice, --json OUT or --help", a);
}

int cli_cmd_report(int argc, char **argv)
{
    /* --json OUT: the merged report as JSON into OUT (the ranks' files of
     * a job into one), not the table; --all: every row and column of the
     * table; --advice: every piece of advice in full. */
    report_opts o = {0};
    report_files files = {0};
    int rc = -1, options = 1;
    for (int i = 1; i < argc && rc < 0; i++) {
        struct stat st;
        if (options && !strcmp(argv[i], "--"))
            options = 0;
        else if (options && argv[i][0] == '-' && argv[i][1])
            rc = report_option(argc, argv, &i, &o);
        else if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = report_add_folder(&files, argv[i]) ? 2 : -1;
        else
            report_push(&files, strdup(argv[i]));
    }
    if (rc >= 0) return rc;
    if (!!o.json + o.all + o.advice > 1) return cli_usage_error("report: --json, --all and --advice: choose one");
    cg_report_format format = o.json     ? CG_REPORT_JSON
                              : o.all    ? CG_REPORT_TEXT_ALL
                              : o.advice ? CG_REPORT_ADVICE
                                         : CG_REPORT_TEXT;
    if (!files.n)
        return cli_usage_error("report: expected one or more report files or folders (saved with callguard run "
                               "--report FILE|DIR/)");
    /* "/dev/stdout" is the stdout we were given, never reopened:
     * `callguard report F >> log` appends to log (a reopen would write
     * from its start). */
    const char *out = o.json ? o.json : "/dev/stdout";
    if (cg_report_merge_files((const char *const *)files.v, files.n, out, format) != CG_OK) {
        if (!strcmp(out, "/dev/stdout") && report_reader_gone()) report_end_as_pipe_closed();
        cgi_say("%s", cg_last_error());
        return 2;
    }
    if (o.json) cli_say_written("the report", o.json, "");
    return 0;
}
