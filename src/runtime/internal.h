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
 * One header per concern (the .c file of the same name defines it). What
 * every part of callguard shares (messages, errors, the launcher's rank,
 * value names, the statistics and trace files' layouts) is below, in
 * src/common; src/report and src/policy are below too: the runtime hands
 * the report what it writes (query.c cg_report_write, trace.c the timeline
 * at exit(), environment.c checks CALLGUARD_REPORT and _TRACE) and nothing
 * there calls back. A file includes and calls only what is on a lower
 * floor here, or in its own row (tests/floors.py checks includes and, with
 * nm, calls).
 * Floors, lowest first:
 *   0 internal.h                what every file shares (cgi_peak_in, cgi_now_ns)
 *   0 probe.h                   dlsym/dlopen of what may be absent, leaving
 *                               dlerror() to the program
 *   0 hide_inih.map             keeps the libinih linked in hidden
 *   1 config                    the process-wide configuration and its lock (data)
 *   1 clock                     the clock of timed calls
 *   1 hlock                     one lock per handle value (thread rules, holds,
 *                               handle-scoped domains)
 *   1 values                    the reading of policy values
 *   1 python.h                  CPython's GIL as the built-in adapter sees it
 *   1 julia.h                   Julia's GC-safe state, likewise
 *   1 wrappers                  real functions to a layer's wrappers (cuGetProcAddress)
 *   2 domain                    lock domains
 *   2 adapter_julia.c           the built-in Julia adapter
 *   3 stats                     the counters (a statistics region)
 *   4 threads                   thread rules: the checker, per-handle locks, holds
 *   4 signals                   the opt-in fatal-signal hook (CALLGUARD_SIGNALS)
 *   5 signals_interpose.c       sigaction as the program sees it while the hook is in
 *   5 site                      layers, sites and their policy slots; the paths
 *                               of cg_call the configuration allows
 *   6 resolve                   the real library and callguard's own objects
 *   6 settings                  per-site settings kept for later layers
 *   6 trace                     the timeline: recording into the rings,
 *                               CALLGUARD_TRACE_LINES
 *   7 adapter_cpython.c         the built-in CPython adapter (finds libpython)
 *   7 dlsym_interpose.c         dlsym as the program sees it: layers' names hidden
 *   7 onstack                   is a guarded call still on this thread's stack
 *                               (the unwinder; reads resolve's own objects)
 *   7 watchdog hang.c           the thread that times counted calls by sampling,
 *                               marks stalls and reports hangs
 *   7 policy_file               policy files
 *   7 query.c                   the C API's questions: statistics, reports
 *   8 stall                     recording a stall (the Python line with it)
 *   8 quirks                    the quirks file: known driver bugs keyed by driver
 *                               identity, switched on as an API starts
 *   9 short                     the short paths: cg_enter/cg_leave, a counted
 *                               call's two halves, a call only checked
 *   9 layer_register.c          a layer joining the process
 *   9 environment               the CALLGUARD_* variables
 *  10 held                      a call left without returning: what a general-path
 *                               call holds, kept off the stack
 *  10 api.c                     the C API's settings
 *  11 call                      the general path (cg_call), and what happens once:
 *                               a site's first call, a thread's first counted one
 *  12 startup.c                 start-up and fork
 */
#ifndef CGI_INTERNAL_H
#define CGI_INTERNAL_H

#include "../common/common.h"

#include <callguard/callguard.h>
#include <callguard/layer.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* The layer's own count of a blocking site's threads inside (layer.h) and
 * a record's peaks are one primitive (common.h). */
static inline void cgi_peak_in(cgi_peak *p) { cg_peak_arrive(&p->now); }
static inline void cgi_peak_out(cgi_peak *p) { cg_peak_depart(&p->now); }

static inline uint64_t cgi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
