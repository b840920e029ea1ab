/* Start-up and fork. libcallguard's constructor runs before any layer
 * registers (layers depend on libcallguard, so its constructor runs first):
 * it maps the statistics region, reads the environment and installs the
 * exit and fork handlers. */
#define _GNU_SOURCE
#include "internal.h"

#include "call.h"
#include "domain.h"
#include "environment.h"
#include "errors.h"
#include "resolve.h"
#include "settings.h"
#include "site.h"
#include "stats.h"
#include "trace.h"

#include <stdlib.h>
#include <string.h>

static void cgi_report_at_exit(void)
{
    const char *path = cgi_env_report_path();
    if (!path) return;
    int text = strcmp(path, "-") == 0;
    if (cg_report_write(path, text ? CG_REPORT_TEXT : CG_REPORT_JSON) != CG_OK)
        fprintf(stderr, "callguard: %s\n", cg_last_error());
}

/* glibc's on_exit hands its handlers the exit status: recorded, a report
 * can say how a process ended even when its own parent reaped it. */
static void cgi_note_exit(int status, void *arg)
{
    (void)arg;
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

static void cgi_atfork_prepare(void) { pthread_mutex_lock(&cgi_cfg_lock); }
static void cgi_atfork_parent(void) { pthread_mutex_unlock(&cgi_cfg_lock); }
static void cgi_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    cgi_cfg_lock = fresh;
    cgi_domains_after_fork_child();
    cgi_stats_after_fork_child();
    cgi_trace_after_fork_child();
    cgi_call_after_fork_child();
}

__attribute__((constructor)) static void cgi_init(void)
{
    cgi_note_own_object((const void *)cgi_init);
    const char *dir = getenv("CALLGUARD_STATS_DIR");
    if (cgi_stats_init(dir) != CG_OK) cgi_die("%s", cg_last_error());
    if (dir && *dir) atomic_store(&cgi_cfg.stats_on, 1);

    /* The runtime default: detect CPython (stalls are reported, nothing is
     * released) unless told otherwise. */
    cgi_runtime_set_locked("auto");
    cgi_env_read();
    atexit(cgi_report_unmatched_at_exit);
    if (cgi_env_report_path()) atexit(cgi_report_at_exit);
    on_exit(cgi_note_exit, NULL); /* registered last: runs before the report is written */
    pthread_atfork(cgi_atfork_prepare, cgi_atfork_parent, cgi_atfork_child);
}
