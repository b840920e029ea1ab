/* The slow path of a guarded call: everything a wrapper does when its site
 * has a policy, statistics or a runtime to leave. The order is DESIGN.md's:
 * leave the runtime before taking the domain lock, stop the clock before
 * re-entering the runtime (CPython may never return from re-entry at exit),
 * never call into the runtime while holding a domain lock. */
#define _GNU_SOURCE
#include "call.h"

#include "domain.h"
#include "python.h"
#include "resolve.h"
#include "site.h"
#include "stats.h"
#include "trace.h"

#include <errno.h>

/* Depth of guarded calls on this thread. Initial-exec and one int: libraries
 * dlopen'd by Python or Julia get initial-exec TLS from a small static pool,
 * and this is read only on the slow path. */
static __thread int cgi_depth __attribute__((tls_model("initial-exec")));

void cgi_call_after_fork_child(void) { cgi_depth = 0; }

typedef struct cgi_frame {
    cg_site *site;
    const void *key;
    cg_thunk thunk;
    void *args;
    uint32_t domain, scope;
    int timed;
    int err;
    int saved_errno;
    uint64_t t0, wait_ns, call_ns;
} cgi_frame;

/* Runs with the runtime left when the site's transition says so. */
static void cgi_inner(void *p)
{
    cgi_frame *f = p;
    if (f->domain) cgi_domain_lock(f->domain, f->scope, f->key, f->timed ? &f->wait_ns : NULL);
    f->t0 = f->timed ? cgi_now_ns() : 0;
    f->err = f->thunk(f->args);
    f->saved_errno = errno;
    if (f->timed) f->call_ns = cgi_now_ns() - f->t0;
    if (f->domain) cgi_domain_unlock(f->domain, f->scope, f->key);
}

static void cgi_max(_Atomic uint64_t *m, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(m, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak_explicit(m, &cur, v, memory_order_relaxed, memory_order_relaxed)) {
    }
}

/* Everything but the lean path below. Not inlined into cg_call, so the lean
 * path does not pay for this one's frame. */
__attribute__((noinline)) static int cgi_call_full(cg_site *s, const void *key, cg_thunk thunk, void *args)
{
    if (!atomic_load_explicit(&s->real, memory_order_acquire)) {
        void *real = cgi_resolve(s->layer, s->name);
        if (!real) return -1;
        /* Under the configuration lock: a policy written at this moment must
         * not be overtaken by a refresh computed from the policy before it. */
        pthread_mutex_lock(&cgi_cfg_lock);
        atomic_store_explicit(&s->real, real, memory_order_release);
        cgi_site_refresh(s);
        pthread_mutex_unlock(&cgi_cfg_lock);
    }
    int stats = atomic_load_explicit(&cgi_cfg.stats_on, memory_order_relaxed);
    cg_counters *c = s->ctr;

    if (cgi_depth > 0) {
        /* A driver callback or a second layer calling back in on this thread:
         * taking the domain lock again would deadlock. */
        int saved = 0, err = thunk(args);
        if (stats) {
            saved = errno;
            atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&c->nested, 1, memory_order_relaxed);
            if (err) atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
            errno = saved;
        }
        return 0;
    }

    cgi_frame f = {.site = s, .key = key, .thunk = thunk, .args = args, .timed = stats};
    f.domain = atomic_load_explicit(&s->domain, memory_order_acquire);
    f.scope = atomic_load_explicit(&s->scope, memory_order_relaxed);

    const cg_adapter *ad = atomic_load_explicit(&cgi_cfg.adapter, memory_order_acquire);
    int leave = 0, held = 0;
    if (ad) {
        uint32_t t = atomic_load_explicit(&s->transition, memory_order_relaxed);
        int wants = t == CG_TRANSITION_ALWAYS ||
                    (t == CG_TRANSITION_BLOCKING && atomic_load_explicit(&s->blocking, memory_order_relaxed));
        int active = atomic_load_explicit(&cgi_cfg.adapter_mode, memory_order_relaxed) == CG_ADAPTER_ACTIVE;
        if ((active && wants) || stats) held = ad == &cgi_cpython_adapter ? cgi_py_holds() : ad->holds();
        leave = held && active && wants;
        if (leave) held = 0;
    }

    cgi_depth++;
    if (leave)
        ad->call_outside(cgi_inner, &f);
    else
        cgi_inner(&f);
    cgi_depth--;

    if (stats) {
        atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
        if (f.err) atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->total_ns, f.call_ns, memory_order_relaxed);
        cgi_max(&c->max_ns, f.call_ns);
        if (f.wait_ns) atomic_fetch_add_explicit(&c->lock_wait_ns, f.wait_ns, memory_order_relaxed);
        uint64_t limit = atomic_load_explicit(&cgi_cfg.stall_ns, memory_order_relaxed);
        if (held && (f.call_ns >= limit || f.wait_ns >= limit)) {
            atomic_fetch_add_explicit(&c->stalls, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&c->stall_ns, f.call_ns + f.wait_ns, memory_order_relaxed);
        }
        /* Tracing (trace.c): one predictable branch when off. */
        if (__builtin_expect(atomic_load_explicit(&cgi_cfg.trace_on, memory_order_relaxed), 0))
            cgi_trace_call(s, f.t0, f.call_ns, f.wait_ns, f.err, held);
    }
    errno = f.saved_errno;
    return 0;
}

/* Does the site's policy say this call leaves the runtime? */
static inline int cgi_wants_leave(const cg_site *s)
{
    uint32_t t = atomic_load_explicit(&s->transition, memory_order_relaxed);
    return t == CG_TRANSITION_ALWAYS ||
           (t == CG_TRANSITION_BLOCKING && atomic_load_explicit(&s->blocking, memory_order_relaxed));
}

/* The lean path's second half, its own function: the policy checks in
 * cg_call need no stack frame (the full path stays a tail jump), and here
 * thunk and args live in callee-saved registers across the calls into
 * CPython instead of being spilled around each. */
__attribute__((noinline)) static int cgi_call_lean(cg_thunk thunk, void *args)
{
    cgi_depth = 1;
    if (__builtin_expect(cgi_py_holds(), 1)) {
        void *ts = cgi_py.save();
        thunk(args);
        /* Before re-entering: at exit a daemon thread may never return from it. */
        cgi_depth = 0;
        cgi_py.restore(ts);
    } else {
        /* Not this thread's GIL (a thread CPython does not know, or the
         * interpreter is not running): nothing to leave, and the site has
         * nothing else to do. */
        thunk(args);
        cgi_depth = 0;
    }
    return 0;
}

int cg_call(cg_site *s, const void *key, cg_thunk thunk, void *args)
{
    /* The lean path: the site only has to leave CPython (the built-in
     * adapter active, no lock, no statistics, resolved, not nested). The hot
     * case of a binding that releases the GIL around every call, so it is
     * tested first and does only what a hand-written Py_BEGIN_ALLOW_THREADS
     * does, plus holds() and the nesting count: no frame, no callback hops,
     * no errno save (CPython's PyEval_RestoreThread keeps errno, see
     * adapter_cpython.c). Each load is one the full path makes too. */
    if (atomic_load_explicit(&cgi_cfg.adapter, memory_order_acquire) == &cgi_cpython_adapter &&
        atomic_load_explicit(&cgi_cfg.adapter_mode, memory_order_relaxed) == CG_ADAPTER_ACTIVE &&
        !atomic_load_explicit(&cgi_cfg.stats_on, memory_order_relaxed) &&
        !atomic_load_explicit(&s->domain, memory_order_acquire) && cgi_wants_leave(s) &&
        atomic_load_explicit(&s->real, memory_order_acquire) && cgi_depth == 0)
        return cgi_call_lean(thunk, args);
    return cgi_call_full(s, key, thunk, args);
}
