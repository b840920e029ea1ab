/* What every file of libcallguard shares. Not installed.
 *
 * Names:
 *   cg_, CG_    the public API: only what include/callguard/ declares
 *               (callguard.h for programs, layer.h for generated layers).
 *   cgi_, CGI_  everything else in the runtime, static or shared between
 *               files. Shared ones are declared in the header of the file
 *               that defines them and marked CGI_HIDDEN, so they are never
 *               exported from libcallguard.so.
 * So `grep -w 'cg_[a-z_]*' src/runtime` finds the public API and nothing else.
 *
 * src/runtime holds what runs during a guarded call and its configuration.
 * One header per concern (the .c file of the same name defines it). A file
 * calls only the concerns above it in this map, so calls go one way, from
 * the bottom of the list up (threads.c reads site.h's cgi_cfg, data only):
 *   internal.h message  errors       what every file shares; one-line messages;
 *                                    a failure's message (cg_last_error)
 *   probe.h                          dlsym/dlopen of what may be absent, leaving
 *                                    dlerror() to the program
 *   names.h  values                  the spelling and reading of policy values
 *   clock                            the clock of timed calls
 *   hlock                            one lock per handle value (thread rules, holds,
 *                                    handle-scoped domains)
 *   launcher                         the rank a job's launcher gave this process (kept
 *                                    in the statistics header)
 *   domain  stats                    lock domains; the counters (a statistics region)
 *   python.h adapter_cpython.c       the built-in host-runtime adapters: CPython's
 *   julia.h adapter_julia.c          GIL, Julia's GC-safe state
 *   stall                            recording a stall
 *   threads                          thread rules: the checker, per-handle locks,
 *                                    holds (reads cgi_cfg's adapter, calls nothing
 *                                    of site.c)
 *   site                             layers, sites and their policy slots (reads
 *                                    threads' switches for each site's flags)
 *   resolve  settings                the real library and callguard's own objects;
 *                                    per-site settings kept for later layers
 *   trace_file.h  trace              the timeline: the rings' layout, recording into
 *                                    them, CALLGUARD_TRACE_LINES
 *   watchdog  hang.c                 the thread that times counted calls by sampling,
 *                                    marks stalls and reports hangs
 *   onstack                          is a guarded call still on this thread's stack
 *                                    (the unwinder; reads resolve's own objects)
 *   call                             the guarded call
 *   signals  signals_interpose.c     the opt-in fatal-signal hook (CALLGUARD_SIGNALS)
 *   policy_file  quirks              policy files; the quirks file (known driver bugs
 *                                    keyed by driver identity, switched on as an API starts)
 *   layer_register.c  wrappers.c     a layer joining the process; real functions to
 *                                    a layer's wrappers (cuGetProcAddress)
 *   environment  secure_notice.h     one CALLGUARD_* variable; the line a privileged
 *                                    process prints about the ones it did not take
 *   api.c  query.c  startup.c        the C API; start-up and fork
 *   hide_inih.map                    keeps the libinih linked in hidden
 * Reports and timelines are written by src/report (its internal.h has its
 * map), which is handed what it writes and calls nothing up here but
 * errors.h and names.h: query.c (cg_report_write), trace.c (the timeline at
 * exit()), environment.c (CALLGUARD_REPORT and _TRACE checked), quirks.h
 * (the quirks as the report's advice reads them) and message.c (utf8.h)
 * call it.
 */
#ifndef CGI_INTERNAL_H
#define CGI_INTERNAL_H

#include <callguard/callguard.h>
#include <callguard/layer.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define CGI_HIDDEN __attribute__((visibility("hidden")))

/* Longest entry point and domain names. */
#define CGI_NAME_MAX 64
#define CGI_DOMAIN_NAME_MAX 40

/* How many threads are at one place at once (`now`), and the most ever
 * (`peak`): a site's threads inside its driver call, or waiting for its
 * lock (stats.h). Exact: every thread that arrives adds itself with one
 * atomic add, so each sees the count it made. */
typedef struct cgi_peak {
    _Atomic uint32_t now, peak;
} cgi_peak;

/* The layer's own count of a blocking site's threads inside (layer.h) is
 * the same pair: one primitive for both. */
_Static_assert(offsetof(cgi_peak, peak) == sizeof(uint32_t), "cg_peak_arrive's pair");
static inline void cgi_peak_in(cgi_peak *p) { cg_peak_arrive(&p->now); }
static inline void cgi_peak_out(cgi_peak *p) { cg_peak_depart(&p->now); }

static inline uint64_t cgi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
