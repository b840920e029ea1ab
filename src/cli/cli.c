/* What the commands of the `callguard` command share: each one's help and
 * the usage errors that point at it, the line naming a file written, the
 * exit, and where libcallguard and the installed layers are. The floor of
 * src/cli: it calls no command. */
#define _GNU_SOURCE
#include "cli.h"
#include "../common/message.h"
#include "../common/variables.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CG_LIBDIR_REL
#define CG_LIBDIR_REL "lib"
#endif

char cli_libdir[PATH_MAX];

int cli_usage_error(const char *fmt, ...)
{
    /* One line, whatever the values in it hold (message.c), as the runtime's. */
    char raw[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    if (strstr(raw, "--help")) /* the message names the help already */
        cgi_say("%s", raw);
    else
        cgi_say("%s (callguard %s%s--help)", raw, cli_command ? cli_command : "", cli_command ? " " : "");
    return 2;
}

int cli_say_written(const char *what, const char *path, const char *more)
{
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return 0;
    cgi_say("wrote %s %s%s%s", what, S_ISDIR(st.st_mode) ? "(a file per process) in " : "", path, more);
    return 1;
}

void cli_exit(int status)
{
    fflush(NULL);
    _exit(status);
}

/* Each command's help fits 80 columns (tests/cli/test_cli_help.py): what
 * it does, its usage, its options in a line each, one example. The whole
 * story is in README.md and docs/configuration.md. */
static const char usage_top[] = "usage: callguard run [OPTIONS] [--] PROGRAM [ARGS...]\n"
                                "       callguard report [OPTIONS] FILE.json|DIR/ ...\n"
                                "       callguard status [--json] [--stuck AFTER] [--watch] [DIR/ | PID ...]\n"
                                "       callguard list [NAME | PATH.so]\n"
                                "       callguard trace -o OUT DIR/ ...\n"
                                "       callguard help [COMMAND]\n"
                                "\n"
                                "Guards a program's GPU driver calls (OpenCL, Level Zero, CUDA, HIP, NCCL,\n"
                                "MPI) and reports them: time in the driver, lock waits, stalls, hangs, crashes.\n"
                                "\n"
                                "commands:\n"
                                "  run      run a program unmodified, its driver calls guarded and counted\n"
                                "  report   print reports saved with run --report, merged into one\n"
                                "  status   what running guarded processes are doing now (a hang: where)\n"
                                "  list     the installed layers, or one layer's entry points and policies\n"
                                "  trace    merge the traces of a job's processes (run --trace DIR/) into one\n"
                                "  help     a command's help (as callguard COMMAND --help)\n"
                                "\n"
                                "options: -h, --help (this help), --version\n"
                                "documents: docs/*.md of the source (docs/report.md reads a report); the pip\n"
                                "  package's callguard prints them: callguard docs [NAME]\n"
                                "example:\n"
                                "  callguard run --serialize clBuildProgram --report - -- python3 job.py\n";

static const char usage_run_head[] = "usage: callguard run [OPTIONS] [--] PROGRAM [ARGS...]\n"
                                     "\n"
                                     "Runs PROGRAM unmodified with every driver call of it and its children guarded\n"
                                     "and counted, writes the report and trace asked for (a line on stderr names\n"
                                     "each file written) and exits as PROGRAM did.\n"
                                     "\n"
                                     "options:\n";

static const char usage_run_foot[] = "\n"
                                     "exit status: PROGRAM's (its signal if it was killed); 2: a bad option or\n"
                                     "setting; 126, 127: PROGRAM not executable, not found; 125: PROGRAM exited 0\n"
                                     "but a report or trace could not be written; 124: --on-stuck abort ended it\n"
                                     "example:\n"
                                     "  callguard run --serialize clBuildProgram --report - -- python3 job.py\n";

/* clang-format off */
const cli_option cli_run_options[] = {
    /* flag               value              the setting it sets      fixed value  help (lines) */
    {"report",            "FILE|DIR/|-",     -1,                      NULL,
     "the report as JSON to FILE, to a file of its own in\n"
     "DIR/ (named by host, rank and pid), or a table (-)\n"
     "on stderr: a summary, then calls by time in the driver"},
    {"all",               NULL,              -1,                      NULL,
     "with --report -: every row and column of the table"},
    {"trace",             "FILE|DIR/",       CGI_SETTING_TRACE,       NULL,
     "calls with arguments (Perfetto); DIR/: a file a process"},
    {"trace-max",         "SIZE[:first]",    CGI_SETTING_TRACE_MAX,   NULL,
     "at most SIZE a process, latest (or :first) kept"},
    {"trace-lines",       "FILE|-",          CGI_SETTING_TRACE_LINES, NULL,
     "one line per call: api entry call_ns lock_wait_ns error"},
    {"serialize",         "FN[=DOMAIN][:process|:handle|:once|:shared][,...]", CGI_SETTING_SERIALIZE, NULL,
     "one thread at a time in FN (a DOMAIN's FNs: one lock);\n"
     ":once, until FN works; :shared, many FN, none else of it"},
    {"release-runtime",   NULL,              CGI_SETTING_RUNTIME,     "release",
     "leave the runtime (the Python GIL) around blocking\n"
     "calls; --release-gil is the same"},
    {"release-gil",       NULL,              CGI_SETTING_RUNTIME,     "release", NULL},
    {"transition",        "always|blocking|never", CGI_SETTING_TRANSITION, NULL,
     "which calls leave it (default: always)"},
    {"stall-ms",          "N",               CGI_SETTING_STALL_MS,    NULL,
     "a call this long holding the runtime is a stall (50)"},
    {"hang-ms",           "N|off",           CGI_SETTING_HANG_MS,     NULL,
     "print the calls in flight once one is N ms old (kept\n"
     "in the statistics at 1 s without it; off: neither)"},
    {"stuck",             "AFTER|off",       CGI_SETTING_STUCK,       NULL,
     "the job's view once a call is AFTER old (default 5m)"},
    {"on-stuck",          "report|abort|CMD", CGI_SETTING_ON_STUCK,   NULL,
     "then: no more (default), end the job, run CMD"},
    {"timing",            "sampled|exact",   CGI_SETTING_TIMING,      NULL,
     "sampled by a watchdog (default), or timed each call"},
    {"check-threads",     NULL,              CGI_SETTING_CHECK,       "threads",
     "report calls the API's thread rules forbid to overlap"},
    {"serialize-handles", NULL,              CGI_SETTING_SERIALIZE_HANDLES, "yes",
     "turn those rules into per-handle locks"},
    {"quirks",            "off|FILE",        CGI_SETTING_QUIRKS,      NULL,
     "known driver bugs, fixed where a driver matches: none,\n"
     "or FILE instead of share/callguard/quirks.ini"},
    {"signals",           "record|off",      CGI_SETTING_SIGNALS,     NULL,
     "note a fatal signal in the report (default: off)"},
    {"api",               "LIST",            -1,                      NULL,
     "only these installed layers: cl,ze (callguard list)"},
    {"layer",             "PATH.so",         -1,                      NULL,
     "a layer from anywhere (repeatable)"},
    {"help",              NULL,              -1,                      NULL,
     "this help"},
    {NULL, NULL, -1, NULL, NULL},
};
/* clang-format on */

/* An option's lines of help: its flag and value, then its help from column
 * 25, on the same line where the first line fits, else on the next. */
static void cli_option_help(FILE *out, const cli_option *o)
{
    char head[80];
    int n = snprintf(head, sizeof head, "  %s--%s%s%s", strcmp(o->flag, "help") ? "" : "-h, ", o->flag,
                     o->value ? " " : "", o->value ? o->value : "");
    const char *h = o->help;
    size_t first = strcspn(h, "\n");
    if (n <= 22)
        fprintf(out, "%-24s%.*s\n", head, (int)first, h);
    else if (n + 2 + (int)first <= 80)
        fprintf(out, "%s  %.*s\n", head, (int)first, h);
    else
        fprintf(out, "%s\n%24s%.*s\n", head, "", (int)first, h);
    for (h += first; *h; h += first) {
        h++;
        first = strcspn(h, "\n");
        fprintf(out, "%24s%.*s\n", "", (int)first, h);
    }
}

static void cli_help_run(FILE *out)
{
    fputs(usage_run_head, out);
    for (const cli_option *o = cli_run_options; o->flag; o++)
        if (o->help) cli_option_help(out, o);
    fputs(usage_run_foot, out);
}

static const char usage_report[] = "usage: callguard report [OPTIONS] FILE.json|DIR/ ...\n"
                                   "\n"
                                   "Prints reports saved with callguard run --report FILE|DIR/ as one: a summary,\n"
                                   "then the calls by time in the driver, within COLUMNS (default 100). A folder\n"
                                   "stands for its *.json files (the ranks of a job); several are merged, with a\n"
                                   "view across ranks and then each process's section.\n"
                                   "\n"
                                   "options:\n"
                                   "  --all        every row and column of the tables, at any width\n"
                                   "  --advice     every piece of advice in full, whether it affects the run\n"
                                   "  --json OUT   write the merged report as JSON to OUT instead of a table\n"
                                   "  -h, --help   this help\n"
                                   "\n"
                                   "example:\n"
                                   "  mpirun -n 4 callguard run --report out/ -- ./app && callguard report out/\n";

static const char usage_list[] = "usage: callguard list [NAME | PATH.so]\n"
                                 "\n"
                                 "Shows a layer: the API it guards, the library it stands in for, the real\n"
                                 "library it calls, and each entry point with its policy and why it may\n"
                                 "block. NAME is an installed layer (cl, ze, cuda, ...), PATH.so a layer file;\n"
                                 "with neither, lists the layers installed beside callguard.\n"
                                 "\n"
                                 "options:\n"
                                 "  -h, --help   this help\n"
                                 "\n"
                                 "example:\n"
                                 "  callguard list cl\n";

static const char usage_status[] = "usage: callguard status [--json | --format F] [--depth N | --all]\n"
                                   "                        [--stuck AFTER] [--watch] [DIR/ | PID ...]\n"
                                   "\n"
                                   "What running guarded processes are doing now: per process its rank, host,\n"
                                   "uptime and calls, each call in flight with its age, the lock it waits for,\n"
                                   "whether it holds the GIL and its Python line (once a second old), and every\n"
                                   "Python thread: its name, tid, GIL and stack, your own frame marked, asked of\n"
                                   "the process's own watchdog through its statistics file (at most 1 s). The\n"
                                   "processes are grouped by what they do, the odd ones first. DIR/ is a run's\n"
                                   "--report folder (its runs alive on this host); PID a process; neither:\n"
                                   "every process of yours under callguard run. No signal, no ptrace; a hung\n"
                                   "process answers. Exit 1 when none.\n"
                                   "\n"
                                   "options:\n"
                                   "  --json         the same as JSON on stdout (--format json)\n"
                                   "  --format F     text, json, or prometheus (calls, calls in flight, oldest)\n"
                                   "  --depth N      frames a thread (default 16; 0: no threads)\n"
                                   "  --all          every frame (at most 256 a thread)\n"
                                   "  --stuck AFTER  a probe: exit 0 when no call is in flight AFTER (30s, 5m),\n"
                                   "                 1 with the view when one is, 2 on a usage error\n"
                                   "  --watch        a line (--json: an object) when a rank becomes stuck (AFTER,\n"
                                   "                 default 5m), moves on, exits or is missing; until none runs\n"
                                   "  -h, --help     this help\n"
                                   "\n"
                                   "example:\n"
                                   "  mpirun -n 3 callguard run --report out/ -- python3 job.py &\n"
                                   "  callguard status out/\n";

static const char usage_trace[] = "usage: callguard trace -o OUT DIR/|FILE.json ...\n"
                                  "\n"
                                  "Merges the traces callguard run --trace DIR/ wrote, one per process, on any\n"
                                  "number of hosts, into one timeline that Perfetto opens: a track group per\n"
                                  "host, rank and pid. Each host's clock is aligned by the realtime each process\n"
                                  "read with its monotonic clock; processes of one host by that clock exactly.\n"
                                  "The file's metadata states how far off the hosts can be.\n"
                                  "\n"
                                  "options:\n"
                                  "  -o, --output OUT   the merged trace (- for stdout)\n"
                                  "  -h, --help         this help\n"
                                  "\n"
                                  "exit status: 0; 1: a file is not such a trace, or OUT cannot be written;\n"
                                  "2: a bad option\n"
                                  "example:\n"
                                  "  mpirun -n 4 callguard run --trace t/ -- ./app\n"
                                  "  callguard trace t/ -o job.json\n";

static const struct {
    const char *name, *text;
} cli_helps[] = {{"report", usage_report}, {"status", usage_status}, {"list", usage_list}, {"trace", usage_trace}};

const char *cli_command;

int cli_help(const char *command)
{
    if (!command) return fputs(usage_top, stdout), 0;
    if (!strcmp(command, "run")) return cli_help_run(stdout), 0;
    for (size_t i = 0; i < sizeof cli_helps / sizeof *cli_helps; i++)
        if (!strcmp(command, cli_helps[i].name)) return fputs(cli_helps[i].text, stdout), 0;
    return cli_usage_error("help: unknown command '%s' (callguard --help lists them)", command);
}

void cli_usage_top(FILE *out) { fputs(usage_top, out); }

void cli_find_libdir(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    /* bin/../lib in both the install tree and the build tree */
    char *dir;
    if (asprintf(&dir, "%s/../%s", exe, CG_LIBDIR_REL) < 0) return;
    char *real = realpath(dir, NULL);
    snprintf(cli_libdir, sizeof cli_libdir, "%s", real ? real : dir);
    free(real), free(dir);
}
