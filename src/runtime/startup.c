/* Start-up and fork. libcallguard's constructor runs before any layer
 * registers (layers depend on libcallguard, so its constructor runs first):
 * it maps the statistics region, reads the environment and installs the
 * exit and fork handlers. */
#define _GNU_SOURCE
#include "internal.h"

#include "call.h"
#include "domain.h"
#include "environment.h"
#include "../common/errors.h"
#include "held.h"
#include "hlock.h"
#include "quirks.h"
#include "resolve.h"
#include "selfread.h"
#include "settings.h"
#include "signals.h"
#include "watchdog.h"
#include "site.h"
#include "stats.h"
#include "threads.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

/* An on_exit handler, like cgi_note_exit: an atexit handler of a shared
 * library runs from its destructor (__cxa_finalize), which can come before
 * the on_exit handlers, and the report would say "unknown". */
static void cgi_report_at_exit(int status, void *arg)
{
    (void)arg;
    int held = cgi_watchdog_hold_at_exit(); /* the region holds still while the report reads it */
    cgi_stats->h.status = status;
    atomic_store(&cgi_stats->h.state, CGI_PROC_EXITED);
    const char *path = cgi_env_report_path();
    int text = path && strcmp(path, "-") == 0;
    if (path && cg_report_write(path, text ? CG_REPORT_TEXT : CG_REPORT_JSON) != CG_OK) cgi_say("%s", cg_last_error());
    cgi_watchdog_release(held);
}

/* glibc's on_exit hands its handlers the exit status: recorded, a report
 * can say how a process ended even when its own parent reaped it. */
static void cgi_note_exit(int status, void *arg)
{
    (void)arg;
    cgi_watchdog_release(cgi_watchdog_hold_at_exit());
    cgi_stats->h.status = status;
    atomic_store(&cgi_stats->h.state, CGI_PROC_EXITED);
}

/* Settings no layer ever had are named, never silently ignored. */
static void cgi_report_unmatched_at_exit(void)
{
    /* Not waiting: a thread stopped inside a configuration change must not
     * hang the exit. */
    if (pthread_mutex_trylock(&cgi_cfg_lock) != 0) return;
    cgi_settings_report_unmatched();
    pthread_mutex_unlock(&cgi_cfg_lock);
}

static void cgi_atfork_prepare(void)
{
    cgi_watchdog_before_fork();
    pthread_mutex_lock(&cgi_cfg_lock);
}
static void cgi_atfork_parent(void) { pthread_mutex_unlock(&cgi_cfg_lock); }
static void cgi_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    cgi_cfg_lock = fresh;
    /* The CLI forks only to exec the program (src/cli/run_wait.c): its child
     * never uses this runtime, whose copied pages would only be faulted in
     * to be reset (a few dozen page copies in every callguard run). */
    if (cgi_in_cli) return;
    cgi_hl_after_fork_child();
    cgi_domains_after_fork_child();
    cgi_stats_after_fork_child();
    cgi_trace_after_fork_child();
    cgi_call_after_fork_child();
    cgi_quirks_after_fork_child();
    cgi_thr_after_fork_child();
    cgi_signals_after_fork_child();
    cgi_selfread_after_fork_child();
}

/* Defined (nonzero) only by the `callguard` command (src/cli/main.c). Its
 * own libcallguard is there to check values and load layers: it guards no
 * program, so it reads no CALLGUARD_* variable, creates no statistics file
 * and writes no report, trace or lines, whatever the environment says (a
 * nested `callguard run`, or CALLGUARD_REPORT left exported in a shell). */
extern const int cgi_cli_process __attribute__((weak, visibility("default")));

__attribute__((constructor)) static void cgi_init(void)
{
    cgi_note_own_object((const void *)cgi_init);
    cgi_held_init();
    cgi_report_quirks = cgi_quirks_naming; /* the report's advice (report.h) */
    cgi_report_args = cgi_site_args_named; /* the timeline's arguments (report.h) */
    if (&cgi_cli_process && cgi_cli_process) {
        cgi_in_cli = 1;
        if (cgi_stats_init(NULL) != CG_OK) cgi_die("%s", cg_last_error());
        cgi_runtime_set_locked("none");
        pthread_atfork(cgi_atfork_prepare, cgi_atfork_parent, cgi_atfork_child);
        return;
    }
    /* Not under raised privilege: a setuid program would create files where
     * its caller says (cgi_env_read names what it ignored). */
    const char *dir = secure_getenv("CALLGUARD_STATS_DIR");
    if (cgi_stats_init(dir) != CG_OK) cgi_die("%s", cg_last_error());
    if (dir && *dir) atomic_store(&cgi_cfg.stats_on, 1);

    /* The runtime default: detect CPython (stalls are reported, nothing is
     * released) unless told otherwise. */
    cgi_runtime_set_locked("auto");
    cgi_env_read();
    cgi_quirks_default();
    cgi_hang_note_stderr();
    cgi_watchdog_note_main();
    atexit(cgi_report_unmatched_at_exit);
    on_exit(cgi_note_exit, NULL);
    if (cgi_env_report_path()) on_exit(cgi_report_at_exit, NULL);
    pthread_atfork(cgi_atfork_prepare, cgi_atfork_parent, cgi_atfork_child);
}
