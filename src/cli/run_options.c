/* callguard run's options, and every value checked before the program
 * starts (exit 2 on a bad one), against the chosen layers, which the CLI
 * loads into itself to read them. Nothing here starts or creates anything
 * but the file --trace-lines names, last, once every other value passed. */
#define _GNU_SOURCE
#include "run.h"
#include "../common/message.h"
#include "../report/outfile.h"
#include "../report/trace_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static void run_push(char ***v, size_t *n, const char *s)
{
    char **more = realloc(*v, (*n + 1) * sizeof *more);
    if (!more || !(more[*n] = strdup(s))) exit(1);
    *v = more;
    (*n)++;
}

/* getopt_long's table, made from cli_run_options: an option's code is its
 * index there plus RUN_OPTION_CODE, clear of getopt's own '?', ':' and 'h'. */
#define RUN_OPTION_CODE 1000
static struct option run_getopt[64];

static void run_getopt_table(void)
{
    size_t i = 0;
    for (; cli_run_options[i].flag && i + 1 < sizeof run_getopt / sizeof *run_getopt; i++)
        run_getopt[i] =
            (struct option){cli_run_options[i].flag, cli_run_options[i].value ? required_argument : no_argument, NULL,
                            RUN_OPTION_CODE + (int)i};
    run_getopt[i] = (struct option){NULL, 0, NULL, 0};
}

/* Edits (insert, delete, replace) from a to b, up to 3. */
static int run_distance(const char *a, const char *b)
{
    size_t n = strlen(b), prev[40], cur[40];
    if (n >= 40 || strlen(a) >= 40) return 3;
    for (size_t j = 0; j <= n; j++)
        prev[j] = j;
    for (size_t i = 1; a[i - 1]; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= n; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]), del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (n + 1) * sizeof *cur);
    }
    return prev[n] < 3 ? (int)prev[n] : 3;
}

/* An option we do not have, and the one meant where a typo is likely. */
static int run_unknown_option(const char *arg)
{
    const char *name = arg[0] == '-' && arg[1] == '-' ? arg + 2 : arg, *meant = NULL;
    size_t len = strcspn(name, "=");
    char typed[40];
    snprintf(typed, sizeof typed, "%.*s", (int)(len < sizeof typed ? len : sizeof typed - 1), name);
    for (const struct option *o = run_getopt; o->name && !meant; o++)
        if (run_distance(typed, o->name) <= 2) meant = o->name;
    if (meant) return cli_usage_error("run: unknown option '%s': did you mean --%s?", arg, meant);
    return cli_usage_error("run: unknown option '%s' (callguard run --help lists them; '--' ends them)", arg);
}

/* --api LIST: each name pushed; -1, or the exit status. */
static int run_take_apis(const char *list, run_opts *o)
{
    char *copy = strdup(list), *save = NULL;
    if (!copy) return 1;
    size_t before = o->napis, len = strlen(list);
    int bad = !len || list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,");
    for (char *a = strtok_r(copy, ",", &save); a && !bad; a = strtok_r(NULL, ",", &save)) {
        /* An API name as layers spell it (cg_layer.api: at most 31 characters). */
        bad = strlen(a) > 31 || strspn(a, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(a);
        if (!bad) run_push(&o->apis, &o->napis, a);
    }
    free(copy);
    if (bad || o->napis == before)
        return cli_usage_error("--api '%s': expected a comma-separated list of API names (1 to 31 lower-case "
                               "letters, digits or _ each: cl,ze)",
                               list);
    return -1;
}

/* One option of cli_run_options with its value: -1, or the exit status. */
static int run_take_option(const cli_option *opt, const char *value, run_opts *o)
{
    if (opt->setting == CGI_SETTING_SERIALIZE) {
        char *joined;
        if (asprintf(&joined, "%s%s%s", o->serialize ? o->serialize : "", o->serialize ? "," : "", value) < 0) return 1;
        free(o->serialize);
        o->set[opt->setting] = o->serialize = joined;
    } else if (opt->setting >= 0) {
        o->set[opt->setting] = opt->fixed ? opt->fixed : value;
    } else if (!strcmp(opt->flag, "report")) {
        o->report = value;
    } else if (!strcmp(opt->flag, "all")) {
        o->report_all = 1;
    } else if (!strcmp(opt->flag, "api")) {
        return run_take_apis(value, o);
    } else if (!strcmp(opt->flag, "layer")) {
        run_push(&o->layer_files, &o->nlayer_files, value);
    } else {
        return cli_help("run");
    }
    return -1;
}

/* Returns -1 when the program should start, else the exit status. */
int run_parse_options(int argc, char **argv, run_opts *o)
{
    optind = 1;
    opterr = 0;
    int c;
    /* '+': stop at the program's name, so its own options stay its own. */
    run_getopt_table();
    while ((c = getopt_long(argc, argv, "+:h", run_getopt, NULL)) != -1) {
        /* `--report -- prog` would take "--" as the file and run "prog"
         * with no separator: an option's value is never "--". */
        if (optarg && strcmp(optarg, "--") == 0 && c != ':' && c != '?')
            return cli_usage_error("run: %s needs a value before '--'",
                                   strcmp(argv[optind - 1], "--") == 0 ? argv[optind - 2] : argv[optind - 1]);
        if (c == 'h') return cli_help("run");
        if (c == ':') return cli_usage_error("run: %s needs a value", argv[optind - 1]);
        if (c < RUN_OPTION_CODE) return run_unknown_option(argv[optind - 1]);
        int rc = run_take_option(&cli_run_options[c - RUN_OPTION_CODE], optarg, o);
        if (rc >= 0) return rc;
    }
    if (o->report_all && (!o->report || strcmp(o->report, "-") != 0))
        return cli_usage_error("--all: the table's every row and column, only with --report -");
    if (optind >= argc)
        return cli_usage_error("run: no program given: expected callguard run [OPTIONS] -- PROGRAM [ARGS...]");
    o->prog = argv + optind;
    return -1;
}

/* Which layers: those --api names and --layer files, else every installed
 * one. Loads them into this process, so the checks below know them. */
int run_choose_layers(const run_opts *o, cli_layers *set)
{
    int rc = 0;
    for (size_t i = 0; i < o->napis && !rc; i++)
        rc = cli_layer_load(set, o->apis[i], NULL);
    for (size_t i = 0; i < o->nlayer_files && !rc; i++)
        rc = cli_layer_load(set, NULL, o->layer_files[i]);
    if (!o->napis && !o->nlayer_files) {
        char **names;
        size_t n = cli_installed_apis(&names);
        for (size_t i = 0; i < n; i++) {
            if (!rc) rc = cli_layer_load(set, names[i], NULL);
            free(names[i]);
        }
        free(names);
    }
    return rc ? rc : -1;
}

/* The part of a message after "VAR=VALUE: " and a repeated "VAR: ". */
static const char *run_reason(const char *var)
{
    const char *msg = cg_last_error(), *p = strstr(msg, ": ");
    if (p) msg = p + 2;
    size_t n = strlen(var);
    if (strncmp(msg, var, n) == 0 && strncmp(msg + n, ": ", 2) == 0) msg += n + 2;
    return msg;
}

/* An entry point of no chosen layer stops the run: the program would run
 * with the site unguarded. rc is what cg_configure or cg_policy_load said. */
static int run_refuse_pending(const char *what, const char *value, const cli_layers *set, const char *var)
{
    char *names = cli_layer_names(set);
    const char *reason = run_reason(var);
    const char *kept = strstr(reason, "; kept");
    int rc = cli_usage_error("%s %s: %.*s (the chosen layers are %s; `callguard list LAYER` lists their entry points)",
                             what, value, kept ? (int)(kept - reason) : (int)strlen(reason), reason, names);
    free(names);
    return rc;
}

/* A file the CLI writes after the program: refused now if it cannot be
 * (a directory, a missing or unwritable directory) or must not be (a file
 * that is not callguard's: cgi_outfile_replaceable), without creating
 * anything: the file is written later as a new file renamed into place
 * (a symlink planted at the name is replaced, never followed). */
static int run_check_writable(const char *flag, const char *path)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return cli_usage_error("%s %s: is a directory, expected a file name", flag, path);
    if (lstat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) return -1; /* /dev/null */
    char why[300];
    /* As run_absolute will make it: the processes of the tree get that. */
    char *cwd = path[0] != '/' ? getcwd(NULL, 0) : NULL, *abs = NULL;
    if (cwd && asprintf(&abs, "%s/%s", cwd, path) < 0) abs = NULL;
    int too_long = cgi_outfile_name_too_long(abs ? abs : path, why, sizeof why);
    free(cwd), free(abs);
    size_t len = strlen(path);
    if (too_long && len > 400) /* its start and end, so the line still says why */
        return cli_usage_error("%s %.200s...%s: cannot be created: %s", flag, path, path + len - 100, why);
    if (too_long) return cli_usage_error("%s %s: cannot be created: %s", flag, path, why);
    if (!cgi_outfile_replaceable(path, why, sizeof why))
        return cli_usage_error("%s %s: %s; callguard replaces only its own reports and timelines and empty files: "
                               "remove it or choose another name",
                               flag, path, why);
    char *dir = strdup(path);
    if (!dir) return 1;
    char *slash = strrchr(dir, '/');
    const char *parent = slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".";
    int rc = -1;
    int e = 0;
    if (stat(parent, &st) != 0)
        e = errno;
    else if (!S_ISDIR(st.st_mode))
        e = ENOTDIR;
    else if (access(parent, W_OK | X_OK) != 0)
        e = errno;
    if (e) rc = cli_usage_error("%s %s: cannot create a file in %s: %s", flag, path, parent, strerror(e));
    free(dir);
    return rc;
}

/* The directory entry a path names: its directory's real path and its last
 * name (malloc'd; the path itself when the directory cannot be resolved). */
static char *run_entry(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL, *entry = NULL;
    if (!real || asprintf(&entry, "%s/%s", real, slash ? slash + 1 : path) < 0) entry = strdup(path);
    free(dir), free(real);
    return entry;
}

/* Two outputs named for one file: the one written last would replace the
 * other (the report renamed over the trace, or over the lines appended
 * during the run), and the program's exit status would say nothing of it.
 * "-" (stderr) and a device or FIFO opened in place (/dev/null) take both. */
static int run_refuse_same_file(const char *flag_a, const char *a, const char *flag_b, const char *b)
{
    if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-")) return -1;
    struct stat st;
    if (stat(a, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) return -1;
    char *ea = run_entry(a), *eb = run_entry(b);
    int rc = ea && eb && strcmp(ea, eb) == 0
                 ? cli_usage_error("%s and %s name one file, %s: each needs its own (the one written last would "
                                   "replace the other)",
                                   flag_a, flag_b, ea)
                 : -1;
    free(ea), free(eb);
    return rc;
}

/* The options' values, and CALLGUARD_SERIALIZE (which --serialize joins),
 * as the program's runtime will take them. */
static int run_check_options(const run_opts *o, const cli_layers *set)
{
    /* The outputs (--trace, --trace-lines) are checked as files below; a
     * flag without a value sets one that is always good. */
    for (const cli_option *opt = cli_run_options; opt->flag; opt++) {
        const char *value = opt->setting >= 0 ? o->set[opt->setting] : NULL;
        if (!value || opt->fixed || cgi_setting_names[opt->setting] == CGI_NAMES_FILE_OR_DASH) continue;
        const char *var = cgi_setting_vars[opt->setting];
        char flag[48];
        snprintf(flag, sizeof flag, "--%s", opt->flag);
        int rc = cg_configure(var, value);
        if (rc == CG_PENDING) return run_refuse_pending(flag, value, set, var);
        if (rc != CG_OK) return cli_usage_error("%s %s: %s", flag, value, run_reason(var));
    }
    const char *env = getenv(cgi_setting_vars[CGI_SETTING_SERIALIZE]);
    if (env && *env) {
        const char *var = cgi_setting_vars[CGI_SETTING_SERIALIZE];
        int rc = cg_configure(var, env);
        if (rc == CG_PENDING) return run_refuse_pending(var, env, set, var);
        if (rc != CG_OK) return cli_usage_error("%s %s: %s", var, env, run_reason(var));
    }
    return -1;
}

/* The CLI's own runtime reads no environment (startup.c): the other
 * variables the program will read are checked here, as the program's
 * runtime will read them. CALLGUARD_REPORT is the CLI's to drop,
 * CALLGUARD_TRACE is --trace, CALLGUARD_STATS_DIR and _LOST are set for the child,
 * CALLGUARD_TRACE_LINES is opened by each process. */
static int run_check_environment(void)
{
    static const char *const not_here[] = {"CALLGUARD_SERIALIZE", "CALLGUARD_POLICY",      "CALLGUARD_REPORT",
                                           "CALLGUARD_TRACE",     "CALLGUARD_TRACE_LINES", "CALLGUARD_STATS_DIR",
                                           "CALLGUARD_STATS_LOST"};
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        if (strncmp(*e, "CALLGUARD_", 10) != 0 || !eq) continue;
        char *var = strndup(*e, (size_t)(eq - *e));
        if (!var) return 1;
        int skip = 0;
        for (size_t i = 0; i < sizeof not_here / sizeof *not_here; i++)
            skip |= strcmp(var, not_here[i]) == 0;
        int rc = skip ? CG_OK : cg_configure(var, eq + 1);
        if (rc != CG_OK) {
            rc = cli_usage_error("%s=%s: %s", var, eq + 1, run_reason(var));
            free(var);
            return rc;
        }
        free(var);
    }
    return -1;
}

/* A library variable that no chosen layer reads is a typo or a layer left out. */
static int run_check_library_vars(const cli_layers *set)
{
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : 0;
        if (strncmp(*e, "CALLGUARD_", 10) != 0 || n < 18 || strncmp(*e + n - 8, "_LIBRARY", 8) != 0) continue;
        char *var = strndup(*e, n);
        if (!var) return 1;
        if (!cli_layer_for_library_var(set, var)) {
            char *names = cli_layer_names(set);
            int rc = cli_usage_error("%s: no chosen layer reads this variable (the chosen layers are %s; "
                                     "`callguard list LAYER` shows each one's variable)",
                                     var, names);
            free(names), free(var);
            return rc;
        }
        free(var);
    }
    return -1;
}

/* The files written: --report, --trace and --trace-lines, each its own and
 * one that can be written. --trace-lines' file is created (last), so a
 * refused run leaves none. */
static int run_check_outputs(const run_opts *o)
{
    const char *trace = o->set[CGI_SETTING_TRACE], *lines = o->set[CGI_SETTING_TRACE_LINES];
    int rc;
    if ((rc = run_refuse_same_file("--report", o->report, "--trace", trace)) >= 0) return rc;
    if ((rc = run_refuse_same_file("--report", o->report, "--trace-lines", lines)) >= 0) return rc;
    if ((rc = run_refuse_same_file("--trace", trace, "--trace-lines", lines)) >= 0) return rc;
    if (trace && (!*trace || strcmp(trace, "-") == 0))
        return cli_usage_error("--trace '%s': expected a file name for the JSON timeline (--trace-lines - writes one "
                               "line per call to stderr)",
                               trace);
    if (trace && (rc = cgi_trace_is_folder(trace) ? trace_check_folder("--trace", trace)
                                                  : run_check_writable("--trace", trace)) >= 0)
        return rc;
    if (lines && !*lines) return cli_usage_error("--trace-lines: expected a file name or '-'");
    if (o->report && !*o->report) return cli_usage_error("--report: expected a file name or '-'");
    if (o->report && strcmp(o->report, "-") != 0 &&
        (rc = run_report_is_folder(o->report) ? run_check_folder("--report", o->report)
                                              : run_check_writable("--report", o->report)) >= 0)
        return rc;
    if (lines && strcmp(lines, "-") != 0) {
        int fd = open(lines, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) return cli_usage_error("--trace-lines %s: cannot open for writing: %s", lines, strerror(errno));
        close(fd);
    }
    return -1;
}

/* Checks every value here, against the layers just loaded, so a typo stops
 * us before the program starts rather than inside it. */
int run_check_values(const run_opts *o, const cli_layers *set)
{
    int rc;
    const char *env_policy = getenv("CALLGUARD_POLICY");
    if ((rc = run_check_options(o, set)) >= 0 || (rc = run_check_environment()) >= 0) return rc;
    /* The policy file is read now the layers are loaded: it says whether
     * all its entry points are theirs. */
    if (env_policy && *env_policy) {
        rc = cg_policy_load(env_policy);
        if (rc == CG_PENDING) return run_refuse_pending("CALLGUARD_POLICY", env_policy, set, "CALLGUARD_POLICY");
        if (rc != CG_OK) return cli_usage_error("CALLGUARD_POLICY=%s: %s", env_policy, cg_last_error());
    }
    if ((rc = run_check_library_vars(set)) >= 0) return rc;
    return run_check_outputs(o);
}

/* A relative path made absolute against our working directory, once,
 * before the program starts: a process of the tree that changed directory
 * would otherwise read or write another file. "-" and absolute paths are
 * kept. The result is malloc'd and lives for the run. */
const char *run_absolute(const char *path)
{
    if (!path || !*path || path[0] == '/' || strcmp(path, "-") == 0) return path;
    char *cwd = getcwd(NULL, 0), *abs = NULL;
    if (!cwd || asprintf(&abs, "%s/%s", cwd, path) < 0) exit(1);
    free(cwd);
    return abs;
}
