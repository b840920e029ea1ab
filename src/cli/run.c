/* callguard run: guard an unmodified program.
 *
 * Every value is checked before the program starts (exit 2 on a bad one),
 * against the chosen layers, which the CLI loads into itself to read them.
 * The child gets the layers preloaded, a directory of soname shims first on
 * LD_LIBRARY_PATH, and a statistics directory; one report is written after
 * the whole process tree has exited; callguard exits as the program did. */
#define _GNU_SOURCE
#include "run.h"
#include "../common/launcher.h"
#include "../common/message.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/* Returns 0, or 1 when the report could not be written (said on stderr,
 * with the path and the error). */
static int run_write_report(const char *report, int all, int folder, const char *dir, const run_result *r)
{
    if (!report) return 0;
    int text = strcmp(report, "-") == 0;
    char *file = folder ? run_folder_claim(report, r->pid) : NULL;
    if (folder && !file) return 1;
    int rc = 0;
    if (cg_report_merge(dir, r->exits, r->nexits, file ? file : report,
                        text ? (all ? CG_REPORT_TEXT_ALL : CG_REPORT_TEXT) : CG_REPORT_JSON) != CG_OK) {
        cgi_say("%s", cg_last_error());
        if (file) unlink(file); /* the empty file that held the name */
        rc = 1;
    } else {
        cli_say_written("the report", file ? file : report, "");
    }
    free(file);
    return rc;
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
    char more[160];
    snprintf(more, sizeof more, " (%" PRIu64 " events", t.events);
    if (t.dropped)
        snprintf(more + strlen(more), sizeof more - strlen(more),
                 ", %" PRIu64 " dropped: --trace-max or a full disk; the report counts them per process", t.dropped);
    strcat(more, ")");
    if (!cli_say_written("the timeline", trace, more) && t.dropped)
        cgi_say("trace %s: %" PRIu64 " events, %" PRIu64 " dropped (--trace-max or a full disk; the report counts them "
                "per process)",
                trace, t.events, t.dropped);
    return 0;
}

/* A rank of a job that was stopped stays a moment after its report is
 * written: a launcher that stops a job (mpirun on SIGTERM, Ctrl-C) kills
 * every rank left with SIGKILL as soon as one rank ends, and the ranks
 * that got the signal at the same moment are then writing theirs. Until
 * a second after the signal (or --on-stuck abort's), at most. */
static void run_linger_if_stopped(const run_watch *watch)
{
    struct timespec at, now;
    cgi_rank rank;
    cgi_launcher_rank(&rank);
    if (rank.rank < 0) return;
    if (watch->aborted) /* ended by --on-stuck abort: as if stopped then */
        at = (struct timespec){(time_t)(watch->abort_ns / 1000000000u), (long)(watch->abort_ns % 1000000000u)};
    else if (!run_stopped_at(&at))
        return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long left = (long long)(at.tv_sec + 1 - now.tv_sec) * 1000000000LL + (at.tv_nsec - now.tv_nsec);
    if (left <= 0 || left > 1000000000LL) return;
    struct timespec ts = {left / 1000000000LL, left % 1000000000LL};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
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
    if (!o.set[CGI_SETTING_TRACE] && env_trace && *env_trace) o.set[CGI_SETTING_TRACE] = env_trace;
    if ((rc = run_choose_layers(&o, &set)) >= 0) return rc;
    o.report = run_absolute(o.report);
    o.set[CGI_SETTING_TRACE] = run_absolute(o.set[CGI_SETTING_TRACE]);
    o.set[CGI_SETTING_TRACE_LINES] = run_absolute(o.set[CGI_SETTING_TRACE_LINES]);
    if (o.set[CGI_SETTING_QUIRKS] && strcmp(o.set[CGI_SETTING_QUIRKS], "off") != 0)
        o.set[CGI_SETTING_QUIRKS] = run_absolute(o.set[CGI_SETTING_QUIRKS]);
    const char *quirks = getenv("CALLGUARD_QUIRKS");
    if (quirks && *quirks && quirks[0] != '/' && strcmp(quirks, "off") != 0)
        setenv("CALLGUARD_QUIRKS", run_absolute(quirks), 1);
    const char *policy = getenv("CALLGUARD_POLICY"), *lines = getenv("CALLGUARD_TRACE_LINES");
    if (policy && *policy && policy[0] != '/') setenv("CALLGUARD_POLICY", run_absolute(policy), 1);
    if (lines && *lines && lines[0] != '/') setenv("CALLGUARD_TRACE_LINES", run_absolute(lines), 1);
    if ((rc = run_check_values(&o, &set)) >= 0) return rc;
    /* Decided before the program runs: a folder it makes at the name is
     * not ours to write into. */
    int folder = o.report && strcmp(o.report, "-") != 0 && run_report_is_folder(o.report);

    char *dir = run_make_dir();
    if (!dir) return 2;
    char *note = folder ? run_live_note(o.report, dir) : NULL;
    env_list env = {0};
    run_lost missing;
    run_lost_open(&missing, dir);
    run_child_environment(&env, &o, &set, dir, &missing);
    run_result r = {0};
    run_watch watch;
    run_stuck_options(&o, &watch);
    /* Inside a launcher (this run has a rank), the job is every run of
     * the folder on this host; around one, the run's own tree. */
    cgi_rank rank;
    cgi_launcher_rank(&rank);
    watch.stats_dir = dir, watch.folder = folder && rank.rank >= 0 ? o.report : NULL;
    rc = run_start_and_wait(o.prog, &env, dir, &watch, &r);
    run_stuck_end(&watch);
    run_env_free(&env);
    run_lost_close(&missing, dir);
    /* The program has ended: the note goes before the report is written,
     * so that a launcher's SIGKILL during a slow write (Open MPI's comes
     * 1 s after its SIGTERM) leaves no note of a run that is not live. */
    if (note) unlink(note);
    free(note);
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
    int lost = run_write_report(o.report, o.report_all, folder, dir, &r);
    lost |= run_write_trace(o.set[CGI_SETTING_TRACE], dir);
    if (o.set[CGI_SETTING_TRACE_LINES]) cli_say_written("the call lines", o.set[CGI_SETTING_TRACE_LINES], "");
    remove_dir(dir);
    free(r.exits), free(dir);
    /* The program's failure or signal wins; a program that succeeded and
     * a report or trace that was lost: 125, callguard's own failure (as
     * env(1) and timeout(1) use it), never 2, 126 or 127. */
    if (watch.aborted) {
        /* Ended by --on-stuck abort: its own status, whatever the program's. */
        run_linger_if_stopped(&watch);
        run_stuck_leave(&watch);
        return RUN_STUCK_EXIT;
    }
    if (lost && WIFEXITED(r.child_status) && WEXITSTATUS(r.child_status) == 0) return CLI_EXIT_LOST_OUTPUT;
    run_linger_if_stopped(&watch);
    return run_exit_as_child(r.child_status);
}
