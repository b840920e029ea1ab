/* callguard run: guard an unmodified program.
 *
 * Every value is checked before the program starts (exit 2 on a bad one),
 * against the chosen layers, which the CLI loads into itself to read them.
 * The child gets the layers preloaded, a directory of soname shims first on
 * LD_LIBRARY_PATH, and a statistics directory; one report is written after
 * the whole process tree has exited; callguard exits as the program did. */
#define _GNU_SOURCE
#include "cli.h"
#include "message.h"
#include "outfile.h"
#include "stats_settle.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#ifndef MFD_CLOEXEC /* glibc older than 2.27 */
#include <linux/memfd.h>
#endif
#include <dirent.h>

extern char **environ;

typedef struct env_list {
    char **v;
    size_t n, cap;
} env_list;

static void env_set(env_list *e, const char *name, const char *value)
{
    size_t len = strlen(name);
    char *entry;
    if (asprintf(&entry, "%s=%s", name, value) < 0) exit(1);
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=') {
            free(e->v[i]);
            e->v[i] = entry;
            return;
        }
    if (e->n + 2 > e->cap) {
        e->cap = e->cap ? 2 * e->cap : 64;
        e->v = realloc(e->v, e->cap * sizeof *e->v);
        if (!e->v) exit(1);
    }
    e->v[e->n++] = entry;
    e->v[e->n] = NULL;
}

static void env_unset(env_list *e, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=') {
            free(e->v[i]);
            e->v[i] = e->v[--e->n];
            e->v[e->n] = NULL;
            return;
        }
}

/* Prepends `first` to a colon-separated variable, keeping what was there. */
static void env_prepend(env_list *e, const char *name, const char *first, const char *sep)
{
    const char *old = getenv(name);
    char *v;
    if (asprintf(&v, "%s%s%s", first, old && *old ? sep : "", old && *old ? old : "") < 0) exit(1);
    env_set(e, name, v);
    free(v);
}

static void env_free(env_list *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
}

static volatile sig_atomic_t child_pid;

static void forward_signal(int sig)
{
    if (child_pid > 0) kill(child_pid, sig);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char *p;
        if (asprintf(&p, "%s/%s", dir, e->d_name) < 0) break;
        if (unlink(p) != 0 && errno == EISDIR) remove_dir(p);
        free(p);
    }
    closedir(d);
    rmdir(dir);
}

/* The options of `callguard run`. */

/* The options of `callguard run`. */
typedef struct run_opts {
    char *serialize; /* every --serialize joined by commas */
    const char *transition, *stall, *report, *trace, *trace_lines, *quirks, *signals;
    char **apis; /* --api names, in order */
    size_t napis;
    char **layer_files; /* --layer paths, in order */
    size_t nlayer_files;
    int release_runtime; /* --release-runtime, or its older spelling --release-gil */
    int check_threads, serialize_handles;
    char **prog;
} run_opts;

static void run_push(char ***v, size_t *n, const char *s)
{
    char **more = realloc(*v, (*n + 1) * sizeof *more);
    if (!more || !(more[*n] = strdup(s))) exit(1);
    *v = more;
    (*n)++;
}

/* Returns -1 when the program should start, else the exit status. */
static int run_parse_options(int argc, char **argv, run_opts *o)
{
    static const struct option opts[] = {{"serialize", required_argument, NULL, 's'},
                                         {"release-runtime", no_argument, NULL, 'g'},
                                         {"release-gil", no_argument, NULL, 'g'},
                                         {"transition", required_argument, NULL, 't'},
                                         {"stall-ms", required_argument, NULL, 'm'},
                                         {"report", required_argument, NULL, 'r'},
                                         {"trace", required_argument, NULL, 'T'},
                                         {"api", required_argument, NULL, 'a'},
                                         {"layer", required_argument, NULL, 'L'},
                                         {"trace-lines", required_argument, NULL, 'l'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"quirks", required_argument, NULL, 'Q'},
                                         {"signals", required_argument, NULL, 'S'},
                                         {"check-threads", no_argument, NULL, 'C'},
                                         {"serialize-handles", no_argument, NULL, 'H'},
                                         {NULL, 0, NULL, 0}};
    optind = 1;
    opterr = 0;
    int c;
    /* '+': stop at the program's name, so its own options stay its own. */
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        /* `--report -- prog` would take "--" as the file and run "prog"
         * with no separator: an option's value is never "--". */
        if (optarg && strcmp(optarg, "--") == 0 && c != ':' && c != '?')
            return cli_usage_error("run: %s needs a value before '--'",
                                   strcmp(argv[optind - 1], "--") == 0 ? argv[optind - 2] : argv[optind - 1]);
        switch (c) {
        case 's': {
            char *joined;
            if (asprintf(&joined, "%s%s%s", o->serialize ? o->serialize : "", o->serialize ? "," : "", optarg) < 0)
                return 1;
            free(o->serialize);
            o->serialize = joined;
            break;
        }
        case 'g': o->release_runtime = 1; break;
        case 'C': o->check_threads = 1; break;
        case 'H': o->serialize_handles = 1; break;
        case 't': o->transition = optarg; break;
        case 'm': o->stall = optarg; break;
        case 'r': o->report = optarg; break;
        case 'T': o->trace = optarg; break;
        case 'l': o->trace_lines = optarg; break;
        case 'Q': o->quirks = optarg; break;
        case 'S': o->signals = optarg; break;
        case 'a': {
            char *copy = strdup(optarg), *save = NULL;
            if (!copy) return 1;
            size_t before = o->napis, len = strlen(optarg);
            int bad = !len || optarg[0] == ',' || optarg[len - 1] == ',' || strstr(optarg, ",,");
            for (char *a = strtok_r(copy, ",", &save); a && !bad; a = strtok_r(NULL, ",", &save)) {
                /* An API name as layers spell it (cg_layer.api: at most 31 characters). */
                bad = strlen(a) > 31 || strspn(a, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(a);
                if (!bad) run_push(&o->apis, &o->napis, a);
            }
            free(copy);
            if (bad || o->napis == before)
                return cli_usage_error("--api '%s': expected a comma-separated list of API names (1 to 31 lower-case "
                                       "letters, digits or _ each: cl,ze)",
                                       optarg);
            break;
        }
        case 'L': run_push(&o->layer_files, &o->nlayer_files, optarg); break;
        case 'h': fputs(cli_usage, stdout); return 0;
        case ':': return cli_usage_error("run: %s needs a value", argv[optind - 1]);
        default: return cli_usage_error("run: unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return cli_usage_error("run: no program given: expected callguard run [OPTIONS] -- PROGRAM [ARGS...]");
    o->prog = argv + optind;
    return -1;
}

/* Which layers: those --api names and --layer files, else every installed
 * one. Loads them into this process, so the checks below know them. */
static int run_choose_layers(const run_opts *o, cli_layers *set)
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

/* Checks every value here, against the layers just loaded, so a typo stops
 * us before the program starts rather than inside it. */
static int run_check_values(const run_opts *o, const cli_layers *set)
{
    int rc;
    const char *env_serialize = getenv("CALLGUARD_SERIALIZE"), *env_policy = getenv("CALLGUARD_POLICY");
    struct {
        const char *flag, *var, *value;
    } checks[] = {
        {"--serialize", "CALLGUARD_SERIALIZE", o->serialize},
        {"--transition", "CALLGUARD_TRANSITION", o->transition},
        {"--stall-ms", "CALLGUARD_STALL_MS", o->stall},
        {"--quirks", "CALLGUARD_QUIRKS", o->quirks},
        {"--signals", "CALLGUARD_SIGNALS", o->signals},
        {"CALLGUARD_SERIALIZE", "CALLGUARD_SERIALIZE", env_serialize && *env_serialize ? env_serialize : NULL}};
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
        if (!checks[i].value) continue;
        rc = cg_configure(checks[i].var, checks[i].value);
        if (rc == CG_PENDING) return run_refuse_pending(checks[i].flag, checks[i].value, set, checks[i].var);
        if (rc != CG_OK)
            return cli_usage_error("%s %s: %s", checks[i].flag, checks[i].value, run_reason(checks[i].var));
    }
    /* The CLI's own runtime reads no environment (startup.c): the other
     * variables the program will read are checked here, as the program's
     * runtime will read them. CALLGUARD_REPORT is the CLI's to drop,
     * CALLGUARD_TRACE is --trace, CALLGUARD_STATS_DIR and _LOST are set for the child,
     * CALLGUARD_TRACE_LINES is opened by each process. */
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
        rc = skip ? CG_OK : cg_configure(var, eq + 1);
        if (rc != CG_OK) {
            rc = cli_usage_error("%s=%s: %s", var, eq + 1, run_reason(var));
            free(var);
            return rc;
        }
        free(var);
    }
    /* The policy file is read now the layers are loaded: it says whether
     * all its entry points are theirs. */
    if (env_policy && *env_policy) {
        rc = cg_policy_load(env_policy);
        if (rc == CG_PENDING) return run_refuse_pending("CALLGUARD_POLICY", env_policy, set, "CALLGUARD_POLICY");
        if (rc != CG_OK) return cli_usage_error("CALLGUARD_POLICY=%s: %s", env_policy, cg_last_error());
    }
    /* A library variable that no chosen layer reads is a typo or a layer left out. */
    for (char **e = environ; *e; e++) {
        const char *eq = strchr(*e, '=');
        size_t n = eq ? (size_t)(eq - *e) : 0;
        if (strncmp(*e, "CALLGUARD_", 10) != 0 || n < 18 || strncmp(*e + n - 8, "_LIBRARY", 8) != 0) continue;
        char *var = strndup(*e, n);
        if (!var) return 1;
        if (!cli_layer_for_library_var(set, var)) {
            char *names = cli_layer_names(set);
            rc = cli_usage_error("%s: no chosen layer reads this variable (the chosen layers are %s; "
                                 "`callguard list LAYER` shows each one's variable)",
                                 var, names);
            free(names), free(var);
            return rc;
        }
        free(var);
    }
    /* Before --trace-lines' file is created (last): a refused run leaves none. */
    if ((rc = run_refuse_same_file("--report", o->report, "--trace", o->trace)) >= 0) return rc;
    if ((rc = run_refuse_same_file("--report", o->report, "--trace-lines", o->trace_lines)) >= 0) return rc;
    if ((rc = run_refuse_same_file("--trace", o->trace, "--trace-lines", o->trace_lines)) >= 0) return rc;
    if (o->trace && (!*o->trace || strcmp(o->trace, "-") == 0))
        return cli_usage_error("--trace '%s': expected a file name for the JSON timeline (--trace-lines - writes one "
                               "line per call to stderr)",
                               o->trace);
    if (o->trace && (rc = run_check_writable("--trace", o->trace)) >= 0) return rc;
    if (o->trace_lines && !*o->trace_lines) return cli_usage_error("--trace-lines: expected a file name or '-'");
    if (o->report && !*o->report) return cli_usage_error("--report: expected a file name or '-'");
    if (o->report && strcmp(o->report, "-") != 0 && (rc = run_check_writable("--report", o->report)) >= 0) return rc;
    /* Last: opening it creates it, and a refused run leaves no file. */
    if (o->trace_lines && strcmp(o->trace_lines, "-") != 0) {
        int fd = open(o->trace_lines, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0)
            return cli_usage_error("--trace-lines %s: cannot open for writing: %s", o->trace_lines, strerror(errno));
        close(fd);
    }
    return -1;
}

/* A relative path made absolute against our working directory, once,
 * before the program starts: a process of the tree that changed directory
 * would otherwise read or write another file. "-" and absolute paths are
 * kept. The result is malloc'd and lives for the run. */
static const char *run_absolute(const char *path)
{
    if (!path || !*path || path[0] == '/' || strcmp(path, "-") == 0) return path;
    char *cwd = getcwd(NULL, 0), *abs = NULL;
    if (!cwd || asprintf(&abs, "%s/%s", cwd, path) < 0) exit(1);
    free(cwd);
    return abs;
}

/* A directory for this run: the processes' statistics files, and shims/. */
static char *run_make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *dir;
    if (asprintf(&dir, "%s/callguard-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) exit(1);
    if (!mkdtemp(dir)) {
        free(dir);
        dir = strdup("/tmp/callguard-XXXXXX");
        if (!dir) exit(1);
        if (!mkdtemp(dir)) {
            cgi_say("cannot create a directory for statistics: %s", strerror(errno));
            free(dir);
            return NULL;
        }
    }
    return dir;
}

/* The shims of the chosen layers: links made for this run, first on the
 * child's library path. Beside each SONAME -> shim, the link
 * libcallguard-real-API.so -> the real library (real_library.c), which the
 * shim needs. A layer whose real library was not found gets no shim link:
 * the shim would find only the placeholder on its run path (every call
 * failing as with no driver) and would hide whatever the program finds
 * itself (its own RUNPATH, a path it dlopens), so the program sees what it
 * would see without callguard, and the preloaded layer still guards the
 * library it finds. A layer with several sonames (libamdhip64.so.5, .so.6,
 * .so.7) gets the shim of the real library's own soname (its DT_SONAME), so
 * the program finds under callguard the sonames it finds without; the first
 * soname's shim when the real library has none of them. */
static void run_link_shims(env_list *env, const cli_layers *set, const char *dir)
{
    char *shims;
    if (asprintf(&shims, "%s/shims", dir) < 0) exit(1);
    int nshims = 0;
    if (mkdir(shims, 0700) == 0)
        for (size_t i = 0; i < set->n; i++) {
            const cli_layer *l = &set->v[i];
            if (!l->shim) continue;
            char *real = cli_real_library(l);
            if (!real) continue;
            char *own = strchr(l->info.soname, ',') ? cli_soname_of(real) : NULL;
            char *shim = own ? cli_shim_for(l, own) : NULL;
            const char *soname = own;
            if (!shim) {
                shim = strdup(l->shim);
                if (!shim) exit(1);
                soname = strrchr(shim, '/') + 1;
            }
            char *to, *alias;
            if (asprintf(&to, "%s/%s", shims, soname) < 0) exit(1);
            if (asprintf(&alias, "%s/libcallguard-real-%s.so", shims, l->info.api) < 0) exit(1);
            if (symlink(real, alias) != 0)
                cgi_say("cannot link %s to %s: %s", alias, real, strerror(errno));
            else if (symlink(shim, to) == 0)
                nshims++;
            free(to), free(alias), free(real), free(own), free(shim);
        }
    if (nshims) env_prepend(env, "LD_LIBRARY_PATH", shims, ":");
    free(shims);
}

/* The processes that could not keep statistics (stats.h): a page of our
 * memory they count into through /proc, whatever the disk, and the file of
 * the directory the count goes to for the report, made now: its page
 * written, so that a disk full by the end still takes the count, or, on a
 * disk full already, empty, to hold the count as its size (no data). */
typedef struct run_lost {
    cgi_lost_page *page; /* NULL: not counted */
    int memfd, file;
    int written;   /* the file's page is written */
    char path[64]; /* CALLGUARD_STATS_LOST */
} run_lost;

static void run_lost_open(run_lost *l, const char *dir)
{
    static const char zeros[4096];
    *l = (run_lost){NULL, -1, -1, 0, ""};
    /* pwrite, not ftruncate, gives the memfd its size: a preloaded
     * library that fakes a full disk (tests/cli/enospc.c) fails ftruncate. */
    l->memfd = (int)syscall(SYS_memfd_create, "callguard-lost", MFD_CLOEXEC); /* memfd_create() is glibc 2.27's */
    if (l->memfd >= 0 && pwrite(l->memfd, zeros, sizeof zeros, 0) == (ssize_t)sizeof zeros)
        l->page = mmap(NULL, sizeof *l->page, PROT_READ | PROT_WRITE, MAP_SHARED, l->memfd, 0);
    if (l->page == MAP_FAILED) l->page = NULL;
    if (!l->page) return;
    memcpy(l->page->magic, CGI_LOST_MAGIC, sizeof CGI_LOST_MAGIC);
    snprintf(l->path, sizeof l->path, "/proc/%d/fd/%d", (int)getpid(), l->memfd);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    l->file = dfd < 0 ? -1 : openat(dfd, CGI_STATS_LOST_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (dfd >= 0) close(dfd);
    l->written = l->file >= 0 && pwrite(l->file, zeros, sizeof zeros, 0) == (ssize_t)sizeof zeros;
    if (l->file >= 0 && !l->written && ftruncate(l->file, 0) != 0) {
        close(l->file);
        l->file = -1;
    }
}

/* The count into the directory's file (made again when the directory or
 * the file was removed during the run); said on stderr when it cannot be. */
static void run_lost_close(run_lost *l, const char *dir)
{
    if (!l->page) return;
    cgi_lost_page page = {.count = atomic_load(&l->page->count)};
    memcpy(page.magic, CGI_LOST_MAGIC, sizeof CGI_LOST_MAGIC);
    struct stat st;
    int e = 0;
    if (page.count && (l->file < 0 || fstat(l->file, &st) != 0 || st.st_nlink == 0)) {
        if (l->file >= 0) close(l->file);
        char *path;
        if (asprintf(&path, "%s/%s", dir, CGI_STATS_LOST_FILE) < 0) exit(1);
        mkdir(dir, 0700);
        l->file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        e = errno;
        l->written = 0;
        free(path);
    }
    int ok = !page.count || (l->file >= 0 && pwrite(l->file, &page, sizeof page, 0) == (ssize_t)sizeof page);
    if (!ok && l->file >= 0 && !l->written) {
        /* No byte can be written: the count is the size of the empty file. */
        e = errno;
        ok = ftruncate(l->file, 0) == 0 && ftruncate(l->file, (off_t)page.count) == 0;
    }
    if (!ok)
        cgi_say("%lu process%s could not keep statistics and %s missing from the report; the count could not be "
                "written to %s: %s",
                (unsigned long)page.count, page.count == 1 ? "" : "es", page.count == 1 ? "is" : "are", dir,
                strerror(l->file < 0 ? e : errno));
    if (l->file >= 0) close(l->file);
    munmap(l->page, sizeof *l->page);
    close(l->memfd);
}

/* The child's environment: ours, with the layers preloaded and the options
 * as CALLGUARD_* variables; no CALLGUARD_REPORT (we write the one report). */
static void run_child_environment(env_list *env, const run_opts *o, const cli_layers *set, const char *dir,
                                  const run_lost *lost)
{
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "CALLGUARD_REPORT=", 17) == 0) continue;
        char *eq = strchr(*e, '=');
        if (!eq) continue;
        char *name = strndup(*e, (size_t)(eq - *e));
        env_set(env, name, eq + 1);
        free(name);
    }
    char *preload = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&preload, &len);
    if (!f) exit(1);
    /* The fatal-signal hook: libcallguard itself first, so that its
     * sigaction() and signal() come before libc's and a handler the
     * program sets later is chained to, not put in place of callguard's. */
    const char *signals = o->signals ? o->signals : getenv("CALLGUARD_SIGNALS");
    if (signals && strcmp(signals, "record") == 0) fprintf(f, "%s/libcallguard.so%s", cli_libdir, set->n ? ":" : "");
    for (size_t i = 0; i < set->n; i++)
        fprintf(f, "%s%s", i ? ":" : "", set->v[i].file);
    fclose(f);
    if (*preload) env_prepend(env, "LD_PRELOAD", preload, ":");
    free(preload);
    if (o->signals) env_set(env, "CALLGUARD_SIGNALS", o->signals);
    run_link_shims(env, set, dir);
    env_set(env, "CALLGUARD_STATS_DIR", dir);
    if (lost->page)
        env_set(env, "CALLGUARD_STATS_LOST", lost->path);
    else
        env_unset(env, "CALLGUARD_STATS_LOST");
    if (o->serialize) {
        const char *old = getenv("CALLGUARD_SERIALIZE");
        char *v;
        if (asprintf(&v, "%s%s%s", old && *old ? old : "", old && *old ? "," : "", o->serialize) < 0) exit(1);
        env_set(env, "CALLGUARD_SERIALIZE", v);
        free(v);
    }
    /* Each process releases the runtime it has (CPython, Julia). */
    if (o->release_runtime) env_set(env, "CALLGUARD_RUNTIME", "release");
    if (o->transition) env_set(env, "CALLGUARD_TRANSITION", o->transition);
    if (o->stall) env_set(env, "CALLGUARD_STALL_MS", o->stall);
    if (o->quirks) env_set(env, "CALLGUARD_QUIRKS", o->quirks);
    if (o->check_threads) env_set(env, "CALLGUARD_CHECK", "threads");
    if (o->serialize_handles) env_set(env, "CALLGUARD_SERIALIZE_HANDLES", "yes");
    /* Each process records its timeline into the statistics directory
     * (it sees CALLGUARD_STATS_DIR); we write the merged FILE afterwards. */
    if (o->trace) env_set(env, "CALLGUARD_TRACE", o->trace);
    if (o->trace_lines) env_set(env, "CALLGUARD_TRACE_LINES", o->trace_lines);
    env_unset(env, "CALLGUARD_REPORT");
}

typedef struct run_result {
    int exec_errno; /* nonzero: the program could not be started */
    int child_status;
    cg_proc_exit *exits;
    size_t nexits;
} run_result;

/* The statistics files as their processes end. A process's file is open
 * for writing as long as the process maps it; inotify says when the last
 * writer closed it (the process exited, died or exec'd), and
 * cgi_stats_settle makes it small: the run's directory grows with the
 * processes alive at once, not with every process that ran. */
typedef struct run_settler {
    int ino; /* -1: the files stay as they are */
    int dfd;
    cgi_stats_region *buf;
} run_settler;

static void settler_open(run_settler *s, const char *dir)
{
    s->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    s->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    s->buf = malloc(sizeof *s->buf);
    if (s->ino >= 0 && s->dfd >= 0 && s->buf && inotify_add_watch(s->ino, dir, IN_CLOSE_WRITE) >= 0) return;
    if (s->ino >= 0) close(s->ino);
    if (s->dfd >= 0) close(s->dfd);
    free(s->buf);
    *s = (run_settler){-1, -1, NULL};
}

static void settler_close(run_settler *s)
{
    if (s->ino < 0) return;
    close(s->ino), close(s->dfd), free(s->buf);
}

/* Events were lost (the queue overflowed): every file is looked at. */
static void settler_all(run_settler *s)
{
    int fd = dup(s->dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        cgi_stats_settle(s->dfd, e->d_name, s->buf);
    closedir(d);
}

static void settler_drain(run_settler *s)
{
    if (s->ino < 0) return;
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(s->ino, buf, sizeof buf)) > 0)
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (ev->mask & IN_Q_OVERFLOW)
                settler_all(s);
            else if (ev->len)
                cgi_stats_settle(s->dfd, ev->name, s->buf);
            p += sizeof *ev + ev->len;
        }
}

/* Wakes ppoll: a child ended. */
static void on_sigchld(int sig) { (void)sig; }
/* A lease break (stats_settle.c holds a lease for a moment): ignored, not fatal. */
static void on_sigio(int sig) { (void)sig; }

/* Starts the program and waits for it and every orphan of its tree that
 * comes to us, so "after the whole tree has exited" means it, settling
 * statistics files as their processes end. Returns 0, or 1 when callguard
 * itself failed. */
static int run_start_and_wait(char **prog, env_list *env, const char *dir, run_result *r)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) return 1;
    run_settler settler;
    settler_open(&settler, dir); /* before the program starts: no file is missed */
    /* SIGCHLD is blocked except inside ppoll, so none is missed between a
     * waitpid and the wait; the program starts with our mask as it was. */
    sigset_t chld, old, waiting;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);
    waiting = old;
    sigdelset(&waiting, SIGCHLD);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        cgi_say("fork: %s", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        close(errpipe[0]);
        sigprocmask(SIG_SETMASK, &old, NULL);
        environ = env->v;
        execvp(prog[0], prog);
        int e = errno;
        if (write(errpipe[1], &e, sizeof e) < 0) _exit(127);
        _exit(127);
    }
    close(errpipe[1]);
    child_pid = pid;
    struct sigaction sa = {0};
    sa.sa_handler = forward_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_sigchld;
    sigaction(SIGCHLD, &sa, NULL);
    sa.sa_handler = on_sigio;
    sigaction(SIGIO, &sa, NULL);
    /* The terminal sends SIGINT/SIGQUIT to the whole foreground group:
     * the program gets its own; callguard waits to write the report. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);

    int exec_errno = 0;
    if (read(errpipe[0], &exec_errno, sizeof exec_errno) == (ssize_t)sizeof exec_errno) r->exec_errno = exec_errno;
    close(errpipe[0]);

    size_t cap = 16;
    r->exits = malloc(cap * sizeof *r->exits);
    if (!r->exits) return 1;
    for (;;) {
        /* Files first: a process that exec'd is still there to be seen. */
        settler_drain(&settler);
        int st;
        pid_t w;
        while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
            if (w == pid) r->child_status = st;
            if (r->nexits == cap) {
                cg_proc_exit *more = realloc(r->exits, (cap *= 2) * sizeof *r->exits);
                if (!more) return 1;
                r->exits = more;
            }
            r->exits[r->nexits++] =
                (cg_proc_exit){w, WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st)};
        }
        if (w < 0 && errno != EINTR) break; /* ECHILD: the whole tree has exited */
        if (w == 0) {
            struct pollfd p = {settler.ino, POLLIN, 0};
            ppoll(&p, settler.ino >= 0, NULL, &waiting);
        }
    }
    settler_close(&settler);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return 0;
}

/* Returns 0, or 1 when the report could not be written (said on stderr,
 * with the path and the error). */
static int run_write_report(const char *report, const char *dir, const run_result *r)
{
    if (!report) return 0;
    int text = strcmp(report, "-") == 0;
    if (cg_report_merge(dir, r->exits, r->nexits, report, text ? CG_REPORT_TEXT : CG_REPORT_JSON) != CG_OK) {
        cgi_say("%s", cg_last_error());
        return 1;
    }
    return 0;
}

/* The timeline of the whole tree, from each process's trace file. Returns
 * 0, or 1 when it could not be written. */
static int run_write_trace(const char *trace, const char *dir)
{
    if (!trace) return 0;
    cg_trace_totals t;
    if (cg_trace_merge(dir, trace, &t) != CG_OK) {
        cgi_say("%s", cg_last_error());
        return 1;
    }
    if (t.dropped)
        cgi_say("trace %s: %lu events, %lu dropped (each thread keeps its last %u; the report counts them "
                "per process)",
                trace, (unsigned long)t.events, (unsigned long)t.dropped, t.events_per_thread);
    return 0;
}

/* Exits as the program did: its status, or its signal. */
static int run_exit_as_child(int child_status)
{
    if (WIFSIGNALED(child_status)) {
        int sig = WTERMSIG(child_status);
        /* Die the same way, without a core of our own. */
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        prctl(PR_SET_DUMPABLE, 0);
        raise(sig);
        return 128 + sig;
    }
    return WEXITSTATUS(child_status);
}

int cli_cmd_run(int argc, char **argv)
{
    static run_opts o; /* static: still reachable on an early exit */
    static cli_layers set;
    int rc;
    if ((rc = run_parse_options(argc, argv, &o)) >= 0) return rc;
    /* The environment's CALLGUARD_TRACE is --trace: each process records
     * into the statistics directory, so only we can write it. */
    const char *env_trace = getenv("CALLGUARD_TRACE");
    if (!o.trace && env_trace && *env_trace) o.trace = env_trace;
    if ((rc = run_choose_layers(&o, &set)) >= 0) return rc;
    o.report = run_absolute(o.report);
    o.trace = run_absolute(o.trace);
    o.trace_lines = run_absolute(o.trace_lines);
    if (o.quirks && strcmp(o.quirks, "off") != 0) o.quirks = run_absolute(o.quirks);
    const char *quirks = getenv("CALLGUARD_QUIRKS");
    if (quirks && *quirks && quirks[0] != '/' && strcmp(quirks, "off") != 0)
        setenv("CALLGUARD_QUIRKS", run_absolute(quirks), 1);
    const char *policy = getenv("CALLGUARD_POLICY"), *lines = getenv("CALLGUARD_TRACE_LINES");
    if (policy && *policy && policy[0] != '/') setenv("CALLGUARD_POLICY", run_absolute(policy), 1);
    if (lines && *lines && lines[0] != '/') setenv("CALLGUARD_TRACE_LINES", run_absolute(lines), 1);
    if ((rc = run_check_values(&o, &set)) >= 0) return rc;

    char *dir = run_make_dir();
    if (!dir) return 2;
    env_list env = {0};
    run_lost missing;
    run_lost_open(&missing, dir);
    run_child_environment(&env, &o, &set, dir, &missing);
    run_result r = {0};
    rc = run_start_and_wait(o.prog, &env, dir, &r);
    env_free(&env);
    run_lost_close(&missing, dir);
    if (rc != 0) {
        free(r.exits);
        return rc;
    }
    if (r.exec_errno) {
        free(r.exits);
        remove_dir(dir);
        cgi_say("%s: %s", o.prog[0], strerror(r.exec_errno));
        return r.exec_errno == ENOENT ? 127 : 126;
    }
    int lost = run_write_report(o.report, dir, &r);
    lost |= run_write_trace(o.trace, dir);
    remove_dir(dir);
    free(r.exits), free(dir);
    /* The program's failure or signal wins; a program that succeeded and
     * a report or trace that was lost: 125, callguard's own failure (as
     * env(1) and timeout(1) use it), never 2, 126 or 127. */
    if (lost && WIFEXITED(r.child_status) && WEXITSTATUS(r.child_status) == 0) return CLI_EXIT_LOST_OUTPUT;
    return run_exit_as_child(r.child_status);
}
