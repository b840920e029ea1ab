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
 * One header per concern (the .c file of the same name defines it). A file
 * includes only headers of the concerns below its own, so calls go one way:
 *   errors  names  values  clock     messages; the spelling and reading of values;
 *                                    the clock of timed calls
 *   trace_file  outfile              the layout of a timeline file; writing a
 *                                    report or trace as a new file renamed into place
 *   hlock                            one lock per handle value (thread rules, holds,
 *                                    handle-scoped domains)
 *   pypackage                        the Python package and distribution of a file
 *   domain  stats  report  python    lock domains, counters, reports, CPython
 *   stats_settle                     (compiled into the CLI) an ended process's
 *                                    statistics file made small
 *   site  resolve                    sites and their policy slots; the real
 *                                    library and callguard's own objects
 *   trace  trace_write.c             the timeline: per-thread rings, Chrome JSON
 *   settings  stall  call            per-site settings kept for later layers;
 *                                    recording a stall; the guarded call
 *   signals                          the opt-in fatal-signal hook (CALLGUARD_SIGNALS)
 *   policy_file  quirks              policy files; the quirks file (known driver bugs
 *                                    keyed by driver identity, switched on as an API starts)
 *   layer_register.c                 a layer joining the process
 *   environment                      one CALLGUARD_* variable
 *   api.c  query.c  startup.c        the C API; start-up and fork
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

static inline void cgi_peak_in(cgi_peak *p)
{
    uint32_t n = atomic_fetch_add_explicit(&p->now, 1, memory_order_relaxed) + 1;
    uint32_t max = atomic_load_explicit(&p->peak, memory_order_relaxed);
    while (n > max &&
           !atomic_compare_exchange_weak_explicit(&p->peak, &max, n, memory_order_relaxed, memory_order_relaxed)) {}
}

static inline void cgi_peak_out(cgi_peak *p) { atomic_fetch_sub_explicit(&p->now, 1, memory_order_relaxed); }

static inline uint64_t cgi_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
