/* The short paths (short.c): cg_enter and cg_leave, the counted call's two
 * halves in the thread's slot and shard, and a call whose only work is
 * checking its thread rules. */
#ifndef CGI_SHORT_H
#define CGI_SHORT_H

#include "internal.h"
#include "stats.h"

/* Depth of general-path calls on this thread (call.c counts them; the
 * short paths that leave the GIL without counting stay out of such a
 * call, which may hold a lock). Initial-exec and one int: libraries
 * dlopen'd by Python or Julia get initial-exec TLS from a small static
 * pool. */
CGI_HIDDEN extern __thread int cgi_depth __attribute__((tls_model("initial-exec")));

/* Raises a record's longest call to v, if longer. */
static inline void cgi_max_loop(cg_counters *c, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(&c->max_ns, memory_order_relaxed);
    while (v > cur &&
           !atomic_compare_exchange_weak_explicit(&c->max_ns, &cur, v, memory_order_relaxed, memory_order_relaxed)) {}
}

/* A site whose only work is checking its thread rules (no lock, no runtime;
 * statistics off, or counted on a TSC with `slot`): the check around the
 * call and nothing else, counted as cg_enter counts a call. Returns 0. */
CGI_HIDDEN __attribute__((noinline)) int cgi_call_checked(cg_site *s, cg_thunk thunk, void *args, cgi_slot *slot);
/* cg_call of a site in CGI_MODE_TRACED_ARGS: CGI_MODE_TRACED's call (counted,
 * timed, its event recorded) made with the frame, whose arguments go with
 * the event. Returns 0 without a call when the thread is inside one (the
 * general path then makes it, nested). */
CGI_HIDDEN __attribute__((noinline)) int cgi_call_traced(cg_site *s, cg_thunk thunk, void *args);

#endif
