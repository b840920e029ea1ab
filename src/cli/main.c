/* callguard: the command line.
 *
 *   callguard run [options] -- PROGRAM [ARGS...]   guard an unmodified program
 *   callguard report FILE.json                     the table again, from a saved report
 *   callguard list API                             entry points and their policies
 *
 * `run` validates every option before the program starts (exit 2 on a bad
 * one), preloads the layers of the chosen APIs, puts a directory of soname
 * shims first on LD_LIBRARY_PATH, collects one statistics file per process
 * of the program's tree and writes one report after the whole tree has
 * exited. It exits as the program did. */
#define _GNU_SOURCE
#include <callguard/callguard.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>
#include <ctype.h>
#include <link.h>

#include "../runtime/names.h"

#ifndef CG_LIBDIR_REL
#define CG_LIBDIR_REL "lib"
#endif

extern char **environ;

static const char *const known_apis[] = {"cl", "ze", "cuda", "toy"};
#define NAPIS (sizeof known_apis / sizeof *known_apis)
/* The soname each API's shim stands in for. */
static const char *const api_sonames[] = {"libOpenCL.so.1", "libze_loader.so.1", "libcuda.so.1", "libcgtoy.so"};

static char libdir[PATH_MAX];

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("callguard: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (callguard --help)\n", stderr);
    va_end(ap);
    return 2;
}

static const char usage[] =
    "usage: callguard run [OPTIONS] [--] PROGRAM [ARGS...]\n"
    "       callguard report FILE.json\n"
    "       callguard list API\n"
    "\n"
    "run: guard every driver call PROGRAM and its children make, and report them.\n"
    "  --serialize FN[=DOMAIN][:process|:handle][,...]\n"
    "                      let one thread at a time into FN; entry points that name the\n"
    "                      same DOMAIN share one lock, across APIs (default DOMAIN: FN)\n"
    "  --release-gil       leave the CPython GIL around calls, as each entry point's\n"
    "                      transition policy says (default: only detect calls that block\n"
    "                      while holding it, and report them as stalls)\n"
    "  --transition always|blocking|never\n"
    "                      which calls leave the runtime with --release-gil (default: always)\n"
    "  --stall-ms N        a call or lock wait this long with the runtime held is a stall (default 50)\n"
    "  --report FILE|-     write the report as JSON to FILE, or as a table to stderr (-)\n"
    "  --trace FILE|-      one line per guarded call\n"
    "  --api LIST          the APIs to guard, comma-separated: cl, ze (default: every installed layer)\n"
    "exit status: the program's own; its signal if it was killed; 2 for a usage or\n"
    "configuration error; 126 if PROGRAM is not executable; 127 if it is not found.\n"
    "\n"
    "report: print the table of a report saved with --report FILE.\n"
    "list: print API's entry points with their policies and blocking reasons.\n";

/* ---- where things are -------------------------------------------------------- */

static void find_libdir(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    /* bin/../lib in both the install tree and the build tree */
    snprintf(libdir, sizeof libdir, "%s/../%s", exe, CG_LIBDIR_REL);
    char real[PATH_MAX];
    if (realpath(libdir, real)) snprintf(libdir, sizeof libdir, "%s", real);
}

static int api_index(const char *name)
{
    for (size_t i = 0; i < NAPIS; i++)
        if (strcmp(known_apis[i], name) == 0) return (int)i;
    return -1;
}

static int layer_path(int api, char *out, size_t cap)
{
    snprintf(out, cap, "%s/libcallguard_%s.so", libdir, known_apis[api]);
    return access(out, R_OK) == 0;
}

static void installed_apis(char *out, size_t cap)
{
    char path[PATH_MAX];
    out[0] = '\0';
    for (size_t i = 0; i < NAPIS; i++)
        if (layer_path((int)i, path, sizeof path))
            snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? ", " : "", known_apis[i]);
    if (!out[0]) snprintf(out, cap, "none");
}

/* Loads a layer into this process so its entry points can be checked. */
static int load_layer(int api)
{
    char path[PATH_MAX];
    if (!layer_path(api, path, sizeof path)) {
        char have[128];
        installed_apis(have, sizeof have);
        fprintf(stderr, "callguard: the %s layer is not installed (%s); installed: %s\n", known_apis[api], path, have);
        return 0;
    }
    if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
        fprintf(stderr, "callguard: cannot load %s: %s\n", path, dlerror());
        return 0;
    }
    return 1;
}

/* A shim needs libcallguard-real-API.so, linked in its folder to the library
 * chosen for this run: CALLGUARD_<API>_LIBRARY, else what the dynamic
 * loader finds for the soname here, where no shim of this run is on the
 * path yet (under an outer `callguard run`, what it finds is that run's
 * shim: then the shim's own real library). Without one the shim is left
 * out, as it could not load. */
static int link_real_library(const char *shims, int api)
{
    char var[64], dep[64], found[PATH_MAX], to[PATH_MAX];
    snprintf(var, sizeof var, "CALLGUARD_%s_LIBRARY", known_apis[api]);
    for (char *p = var; *p; p++) *p = (char)toupper((unsigned char)*p);
    snprintf(dep, sizeof dep, "libcallguard-real-%s.so", known_apis[api]);
    const char *path = getenv(var);
    if (!path || path[0] != '/') {
        void *h = dlopen(api_sonames[api], RTLD_LAZY | RTLD_LOCAL);
        void *real = h ? dlopen(dep, RTLD_LAZY | RTLD_NOLOAD) : NULL;
        struct link_map *lm = NULL;
        if (!h || dlinfo(real ? real : h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || lm->l_name[0] != '/') return 0;
        if (!realpath(lm->l_name, found)) return 0;
        path = found;
    }
    snprintf(to, sizeof to, "%s/%s", shims, dep);
    return access(path, R_OK) == 0 && symlink(path, to) == 0;
}

/* ---- list and report ---------------------------------------------------------- */

static int cmd_list(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) return fputs(usage, stdout), 0;
    if (argc != 2) return usage_error("list: expected one API name (cl, ze, cuda)");
    int api = api_index(argv[1]);
    if (api < 0) return usage_error("list: unknown API '%s': expected cl, ze or cuda", argv[1]);
    if (!load_layer(api)) return 2;
    long n = cg_list_sites(known_apis[api], NULL, 0);
    cg_site_info *s = calloc((size_t)n + 1, sizeof *s);
    if (!s) return 1;
    n = cg_list_sites(known_apis[api], s, (size_t)n);
    printf("%-40s %-10s %-16s %s\n", "entry point", "transition", "serialize", "blocking reason");
    for (long i = 0; i < n; i++) {
        char ser[64];
        snprintf(ser, sizeof ser, "%s%s", s[i].domain[0] ? s[i].domain : "-",
                 s[i].domain[0] && s[i].scope == CG_SCOPE_HANDLE ? ":handle" : "");
        char name[96];
        if (s[i].variant_of) snprintf(name, sizeof name, "%s (as %s)", s[i].name, s[i].variant_of);
        else snprintf(name, sizeof name, "%s", s[i].name);
        printf("%-40s %-10s %-16s %s\n", name, cgi_transition_name(s[i].transition), ser, s[i].blocking ? s[i].reason : "-");
    }
    printf("%ld entry points\n", n);
    free(s);
    return 0;
}

static int cmd_report(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) return fputs(usage, stdout), 0;
    if (argc != 2) return usage_error("report: expected one report file (saved with callguard run --report FILE)");
    fflush(stdout);
    int rc = cg_report_convert(argv[1], "/dev/stdout", CG_REPORT_TEXT);
    if (rc != CG_OK) {
        fprintf(stderr, "callguard: %s\n", cg_last_error());
        return 2;
    }
    return 0;
}

/* ---- run ------------------------------------------------------------------------ */

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
    for (size_t i = 0; i < e->n; i++) free(e->v[i]);
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
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (unlink(p) != 0 && errno == EISDIR) remove_dir(p);
    }
    closedir(d);
    rmdir(dir);
}

/* The options of `callguard run`. */
typedef struct run_opts {
    char *serialize; /* every --serialize joined by commas */
    const char *transition, *stall, *report, *trace, *apis;
    int release_gil;
    char **prog;
} run_opts;

/* Returns -1 when the program should start, else the exit status. */
static int run_parse_options(int argc, char **argv, run_opts *o)
{
    static const struct option opts[] = {
        {"serialize", required_argument, NULL, 's'}, {"release-gil", no_argument, NULL, 'g'},
        {"transition", required_argument, NULL, 't'}, {"stall-ms", required_argument, NULL, 'm'},
        {"report", required_argument, NULL, 'r'},     {"trace", required_argument, NULL, 'T'},
        {"api", required_argument, NULL, 'a'},        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    optind = 1;
    opterr = 0;
    int c;
    /* '+': stop at the program's name, so its own options stay its own. */
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        switch (c) {
        case 's': {
            char *joined;
            if (asprintf(&joined, "%s%s%s", o->serialize ? o->serialize : "", o->serialize ? "," : "", optarg) < 0)
                return 1;
            free(o->serialize);
            o->serialize = joined;
            break;
        }
        case 'g': o->release_gil = 1; break;
        case 't': o->transition = optarg; break;
        case 'm': o->stall = optarg; break;
        case 'r': o->report = optarg; break;
        case 'T': o->trace = optarg; break;
        case 'a': o->apis = optarg; break;
        case 'h': fputs(usage, stdout); return 0;
        case ':': return usage_error("run: %s needs a value", argv[optind - 1]);
        default: return usage_error("run: unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc) return usage_error("run: no program given: expected callguard run [OPTIONS] -- PROGRAM [ARGS...]");
    o->prog = argv + optind;
    return -1;
}

/* Which layers: those --api names, else every installed one. Loads them
 * into this process, so the checks below know their entry points. */
static int run_choose_layers(const run_opts *o, int use[NAPIS])
{
    char path[PATH_MAX];
    if (o->apis) {
        char copy[256], *save = NULL;
        snprintf(copy, sizeof copy, "%s", o->apis);
        int any = 0;
        for (char *a = strtok_r(copy, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
            int i = api_index(a);
            if (i < 0) return usage_error("--api %s: unknown API '%s': expected a list of cl, ze, cuda", o->apis, a);
            use[i] = any = 1;
        }
        if (!any) return usage_error("--api '%s': expected a list of cl, ze, cuda", o->apis);
    } else {
        for (size_t i = 0; i < NAPIS; i++)
            if (strcmp(known_apis[i], "toy") != 0) use[i] = layer_path((int)i, path, sizeof path);
    }
    for (size_t i = 0; i < NAPIS; i++)
        if (use[i] && !load_layer((int)i)) return 2;
    return -1;
}

/* Checks every value here, against the layers just loaded, so a typo stops
 * us before the program starts rather than inside it. */
static int run_check_values(const run_opts *o, const int use[NAPIS])
{
    struct {
        const char *flag, *var, *value;
    } checks[] = {{"--serialize", "CALLGUARD_SERIALIZE", o->serialize},
                  {"--transition", "CALLGUARD_TRANSITION", o->transition},
                  {"--stall-ms", "CALLGUARD_STALL_MS", o->stall}};
    for (size_t i = 0; i < sizeof checks / sizeof *checks; i++) {
        if (!checks[i].value) continue;
        if (cg_configure(checks[i].var, checks[i].value) != CG_OK) {
            const char *msg = strstr(cg_last_error(), ": ");
            return usage_error("%s %s: %s", checks[i].flag, checks[i].value, msg ? msg + 2 : cg_last_error());
        }
    }
    if (o->serialize) {
        /* cg_configure recorded the names; check each is an entry point of a guarded API. */
        char *copy = strdup(o->serialize), *save = NULL;
        if (!copy) return 1;
        for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
            item[strcspn(item, "=:")] = '\0';
            cg_site_stats st;
            if (cg_get_stats(item, &st) != CG_OK) {
                char have[64] = "";
                for (size_t i = 0; i < NAPIS; i++)
                    if (use[i]) snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s", have[0] ? ", " : "", known_apis[i]);
                int rc = usage_error("--serialize: unknown entry point '%s' (not in the %s layer%s; `callguard list API` lists them)",
                                     item, have, strchr(have, ',') ? "s" : "");
                free(copy);
                return rc;
            }
        }
        free(copy);
    }
    if (o->trace && strcmp(o->trace, "-") != 0) {
        int fd = open(o->trace, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0) return usage_error("--trace %s: cannot open for writing: %s", o->trace, strerror(errno));
        close(fd);
    }
    if (o->report && !*o->report) return usage_error("--report: expected a file name or '-'");
    if (o->report && strcmp(o->report, "-") != 0) {
        int fd = open(o->report, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) return usage_error("--report %s: cannot open for writing: %s", o->report, strerror(errno));
        close(fd);
    }
    return -1;
}

/* A directory for this run: the processes' statistics files, and shims/. */
static char *run_make_dir(char *buf, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(buf, cap, "%s/callguard-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *dir = mkdtemp(buf);
    if (!dir) {
        snprintf(buf, cap, "/tmp/callguard-XXXXXX");
        dir = mkdtemp(buf);
    }
    if (!dir) fprintf(stderr, "callguard: cannot create a directory for statistics: %s\n", strerror(errno));
    return dir;
}

/* The shims of the guarded APIs only: links made for this run, first on
 * the child's library path. */
static void run_link_shims(env_list *env, const int use[NAPIS], const char *dir)
{
    char shims[PATH_MAX];
    snprintf(shims, sizeof shims, "%s/shims", dir);
    int nshims = 0;
    if (mkdir(shims, 0700) == 0)
        for (size_t i = 0; i < NAPIS; i++) {
            char from[PATH_MAX], to[PATH_MAX];
            snprintf(from, sizeof from, "%s/callguard/shims/%s", libdir, api_sonames[i]);
            snprintf(to, sizeof to, "%s/%s", shims, api_sonames[i]);
            if (use[i] && access(from, R_OK) == 0 && link_real_library(shims, (int)i) && symlink(from, to) == 0)
                nshims++;
        }
    if (nshims) env_prepend(env, "LD_LIBRARY_PATH", shims, ":");
}

/* The child's environment: ours, with the layers preloaded and the options
 * as CALLGUARD_* variables; no CALLGUARD_REPORT (we write the one report). */
static void run_child_environment(env_list *env, const run_opts *o, const int use[NAPIS], const char *dir)
{
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "CALLGUARD_REPORT=", 17) == 0) continue;
        char *eq = strchr(*e, '=');
        if (!eq) continue;
        char *name = strndup(*e, (size_t)(eq - *e));
        env_set(env, name, eq + 1);
        free(name);
    }
    char preload[4 * PATH_MAX] = "", path[PATH_MAX];
    for (size_t i = 0; i < NAPIS; i++)
        if (use[i]) {
            layer_path((int)i, path, sizeof path);
            snprintf(preload + strlen(preload), sizeof preload - strlen(preload), "%s%s", preload[0] ? ":" : "", path);
        }
    env_prepend(env, "LD_PRELOAD", preload, ":");
    run_link_shims(env, use, dir);
    env_set(env, "CALLGUARD_STATS_DIR", dir);
    if (o->serialize) {
        const char *old = getenv("CALLGUARD_SERIALIZE");
        char *v;
        if (asprintf(&v, "%s%s%s", old && *old ? old : "", old && *old ? "," : "", o->serialize) < 0) exit(1);
        env_set(env, "CALLGUARD_SERIALIZE", v);
        free(v);
    }
    if (o->release_gil) env_set(env, "CALLGUARD_RUNTIME", "cpython");
    if (o->transition) env_set(env, "CALLGUARD_TRANSITION", o->transition);
    if (o->stall) env_set(env, "CALLGUARD_STALL_MS", o->stall);
    if (o->trace) env_set(env, "CALLGUARD_TRACE", o->trace);
    env_unset(env, "CALLGUARD_REPORT");
}

/* How the program's process tree ended. */
typedef struct run_result {
    int exec_errno; /* nonzero: the program could not be started */
    int child_status;
    cg_proc_exit *exits;
    size_t nexits;
} run_result;

/* Starts the program and waits for it and every orphan of its tree that
 * comes to us, so "after the whole tree has exited" means it. Returns 0, or
 * 1 when callguard itself failed. */
static int run_start_and_wait(char **prog, env_list *env, run_result *r)
{
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) return 1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "callguard: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        close(errpipe[0]);
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
        int st;
        pid_t w = waitpid(-1, &st, 0);
        if (w < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (w == pid) r->child_status = st;
        if (r->nexits == cap) {
            cg_proc_exit *more = realloc(r->exits, (cap *= 2) * sizeof *r->exits);
            if (!more) return 1;
            r->exits = more;
        }
        r->exits[r->nexits++] = (cg_proc_exit){w, WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st)};
    }
    return 0;
}

static void run_write_report(const char *report, const char *dir, const run_result *r)
{
    if (!report) return;
    int text = strcmp(report, "-") == 0;
    if (cg_report_merge(dir, r->exits, r->nexits, report, text ? CG_REPORT_TEXT : CG_REPORT_JSON) != CG_OK)
        fprintf(stderr, "callguard: %s\n", cg_last_error());
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

static int cmd_run(int argc, char **argv)
{
    static run_opts o; /* static: still reachable on an early exit */
    int use[NAPIS] = {0}, rc;
    if ((rc = run_parse_options(argc, argv, &o)) >= 0) return rc;
    if ((rc = run_choose_layers(&o, use)) >= 0) return rc;
    if ((rc = run_check_values(&o, use)) >= 0) return rc;

    char dirbuf[PATH_MAX];
    char *dir = run_make_dir(dirbuf, sizeof dirbuf);
    if (!dir) return 2;
    env_list env = {0};
    run_child_environment(&env, &o, use, dir);
    run_result r = {0};
    rc = run_start_and_wait(o.prog, &env, &r);
    env_free(&env);
    free(o.serialize);
    o.serialize = NULL;
    if (rc != 0) {
        free(r.exits);
        return rc;
    }
    if (r.exec_errno) {
        free(r.exits);
        remove_dir(dir);
        fprintf(stderr, "callguard: %s: %s\n", o.prog[0], strerror(r.exec_errno));
        return r.exec_errno == ENOENT ? 127 : 126;
    }
    run_write_report(o.report, dir, &r);
    remove_dir(dir);
    free(r.exits);
    return run_exit_as_child(r.child_status);
}

int main(int argc, char **argv)
{
    find_libdir();
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) return fputs(usage, stdout), 0;
    if (!strcmp(cmd, "--version")) return puts("callguard " CALLGUARD_VERSION), 0;
    if (!strcmp(cmd, "run")) return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "report")) return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "list")) return cmd_list(argc - 1, argv + 1);
    return usage_error("unknown command '%s': expected run, report or list", cmd);
}
