/* The slow path of a guarded call: everything a wrapper does when its site
 * has a policy, statistics or a runtime to leave. The order (docs/design.md, "One guarded call"):
 * leave the runtime before taking the domain lock, stop the clock before
 * re-entering the runtime (CPython may never return from re-entry at exit),
 * never call into the runtime while holding a domain lock. */
#define _GNU_SOURCE
#include "call.h"

#include "clock.h"
#include "domain.h"
#include "../common/errors.h"
#include "onstack.h"
#include "python.h"
#include "resolve.h"
#include "site.h"
#include "stall.h"
#include "stats.h"
#include "threads.h"
#include "trace.h"
#include "watchdog.h"

#include <errno.h>
#include <stdlib.h>

/* Depth of guarded-path calls on this thread. Initial-exec and one int:
 * libraries dlopen'd by Python or Julia get initial-exec TLS from a small
 * static pool. */
static __thread int cgi_depth __attribute__((tls_model("initial-exec")));
/* Set by cg_adapter_ran_held(): the adapter's call_outside is running fn
 * with the runtime held (read by the general path after call_outside). */
static __thread int cgi_ran_held __attribute__((tls_model("initial-exec")));

void cg_adapter_ran_held(void) { cgi_ran_held = 1; }

/* ---- a call left without returning (issue 32) ----------------------------------
 * A thread can leave a guarded call without returning through it: cancelled
 * (pthread_cancel) or ended (pthread_exit) in the driver, or jumped out of
 * it (a signal handler's siglongjmp). Neither runs any code of ours, and
 * the call's frame is on a stack that is unwound or reused. What the
 * general path holds while in its driver call is therefore kept here, off
 * the stack, in one record per thread: a thread that ends gives it all back
 * from the record's thread-specific destructor; a thread that jumped out
 * finds it at its next guarded call (cgi_call_guarded: the call it is
 * "inside" is no longer on its stack, onstack.c) and gives it back then.
 * The fast and counted paths hold no lock and keep nothing here: their
 * call is named in the thread's slot, which is enough to undo it. */
typedef struct cgi_held {
    uint32_t stage;        /* 1: in its driver call, holding what follows */
    uint32_t domain;       /* its domain's id, or 0 */
    uint32_t threads;      /* CGI_DOM_CHECK | CGI_DOM_HLOCK: its thread rules' state is in tc */
    cgi_dlock dlock;       /* what the domain's lock took, for its unlock */
    cg_counters *peaks;    /* the site's counters whose threads inside count it, or NULL */
    cgi_onstack_seen seen; /* the outer call a nested one found on the stack */
    cgi_thr_call tc;
} cgi_held;

/* This thread's record, allocated at its first guarded-path call. One
 * pointer of initial-exec TLS. */
static __thread cgi_held *cgi_my_held __attribute__((tls_model("initial-exec")));
static pthread_key_t cgi_held_key;

/* Does a counted or short path count its calls of the site whose record is
 * `c` among the threads inside? The site's (or a variant's) policy says so
 * now, as it did when the call entered unless it changed meanwhile. */
static int cgi_counts_inside(const cg_counters *c)
{
    for (cg_layer *l = __atomic_load_n(&cgi_layers, __ATOMIC_ACQUIRE); l; l = l->next)
        for (unsigned i = 0; i < l->nsites; i++) {
            cg_site *s = &l->sites[i];
            if (s->ctr != c) continue;
            if (atomic_load_explicit(&s->peaks, memory_order_relaxed) ||
                atomic_load_explicit(&s->mode, memory_order_relaxed) == CGI_MODE_PEAKS)
                return 1;
        }
    return 0;
}

/* Gives back what this thread's call left behind, and leaves the thread
 * outside any call: the general path's locks, thread-rule state and count
 * inside (exact, from the record), or a counted call's count inside (from
 * its site's policy), then the slot. Not the runtime a call left: a thread
 * that jumped out of a call made with the GIL released runs on without it
 * (docs/design.md). */
static void cgi_abandon(cgi_held *h)
{
    cgi_slot *slot = cgi_my_slot;
    int own = slot != &cgi_unclaimed_slot && slot != &cgi_spare_slot;
    cg_counters *c = own ? atomic_load_explicit(&slot->counters, memory_order_relaxed) : NULL;
    if (cgi_depth > 0) {
        if (h && h->stage) {
            if (h->peaks) cgi_peak_out(&h->peaks->inside);
            if (h->threads & CGI_DOM_CHECK) cgi_thr_check_leave(NULL, NULL, &h->tc);
            if (h->domain) cgi_domain_unlock(h->domain, h->dlock);
            if (h->threads & CGI_DOM_HLOCK) cgi_thr_unlock(&h->tc);
            h->stage = 0;
            h->threads = 0;
        }
    } else if (c) {
        if (slot->peaked || cgi_counts_inside(c)) cgi_peak_out(&c->inside);
    }
    if (own) {
        slot->peaked = 0;
        atomic_store_explicit(&slot->waiting, 0, memory_order_relaxed);
        atomic_store_explicit(&slot->timed, 0, memory_order_relaxed);
        atomic_store_explicit(&slot->counters, NULL, memory_order_release);
    }
    cgi_depth = 0;
}

/* The thread ends (its record's destructor). It runs before the slot's
 * (its key is made first, at start-up: docs/design.md), so the slot still
 * names the call a cancelled thread was in. */
static void cgi_held_exit(void *p)
{
    cgi_held *h = p;
    cg_counters *in = atomic_load_explicit(&cgi_my_slot->counters, memory_order_relaxed);
    if (cgi_depth > 0 || (in && in != &cgi_no_counters)) cgi_abandon(h);
    cgi_my_held = NULL;
    free(h);
}

void cgi_call_init(void)
{
    if (pthread_key_create(&cgi_held_key, cgi_held_exit) != 0) cgi_die("cannot create a thread key for guarded calls");
}

/* A thread's first guarded-path call, with its runtime left and no lock
 * held: the process's first also loads the stack walker (a dlopen, which
 * waits for the dynamic loader's lock: never while holding the GIL that
 * the loader lock's holder may wait for, docs/hip.md's loader lock test).
 * Out of memory, the call keeps its record in `spare`, on its own stack:
 * then nothing can be given back for it. */
__attribute__((noinline, cold)) static cgi_held *cgi_held_new(cgi_held *spare)
{
    cgi_onstack_prime();
    cgi_held *h = calloc(1, sizeof *h);
    if (!h || pthread_setspecific(cgi_held_key, h) != 0) {
        free(h);
        return spare;
    }
    cgi_my_held = h;
    return h;
}

/* A thread that looks inside a call (cgi_nested): is that call still on its
 * stack? Out of line: it walks the stack (onstack.c), and is reached only by
 * a nested call or by the first call after a thread jumped out of one. */
__attribute__((noinline)) static int cgi_still_inside(const cg_site *s)
{
    cgi_held *h = cgi_my_held;
    cgi_onstack_seen none = {0};
    if (cgi_outer_call_on_stack(s->layer, h ? &h->seen : &none)) return 1;
    cgi_abandon(h);
    return 0;
}

void cgi_call_after_fork_child(void)
{
    cgi_depth = 0;
    if (cgi_my_held) cgi_my_held->stage = 0;
    cgi_watchdog_after_fork_child();
}

typedef struct cgi_frame {
    cg_site *site;
    const void *key;
    cg_thunk thunk;
    void *args;
    uint32_t domain, scope;
    cgi_held *rec;    /* this thread's record of what the call holds in its driver call */
    uint32_t threads; /* CGI_DOM_CHECK | CGI_DOM_HLOCK: the site's thread rules are checked, locked */
    int timed;
    int held;           /* the runtime is held through the call (known at entry) */
    cg_counters *peaks; /* the site's counters when its peaks are counted (cgi_peaks_of), else NULL */
    int err;
    int saved_errno;
    cgi_slot *slot;        /* this thread's slot when timed */
    uint64_t t0, t1, wait; /* ticks: entered (or got the lock), left, waited for the lock */
    uint64_t wait_ns, call_ns;
} cgi_frame;

/* ---- statistics: the site's record and this thread's slot --------------------
 * A call is counted when it enters, and its slot points at the site's
 * counters until it leaves: a process that dies in the driver leaves both
 * behind in its file. A thread that has only cgi_spare_slot keeps its clock
 * in the frame alone (f->slot is NULL). */

static inline void cgi_stats_enter(cgi_frame *f)
{
    cg_counters *c = f->site->ctr;
    atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
    f->t0 = cgi_ticks();
    if (!f->slot) return;
    /* This call reads the clock: the watchdog does not sample it. */
    atomic_store_explicit(&f->slot->timed, 1, memory_order_relaxed);
    atomic_store_explicit(&f->slot->entered, f->t0, memory_order_relaxed);
    if (f->domain || (f->threads & CGI_DOM_HLOCK)) atomic_store_explicit(&f->slot->waiting, 1, memory_order_relaxed);
    atomic_store_explicit(&f->slot->counters, c, memory_order_release);
}

static inline void cgi_stats_locked(cgi_frame *f, int waited)
{
    if (waited) {
        uint64_t t = cgi_ticks();
        f->wait = t - f->t0, f->t0 = t;
    }
    if (f->slot) atomic_store_explicit(&f->slot->waiting, 0, memory_order_relaxed);
}

static inline void cgi_stats_leave(cgi_frame *f)
{
    f->t1 = cgi_ticks();
    if (!f->slot) return;
    atomic_store_explicit(&f->slot->counters, NULL, memory_order_release);
    atomic_store_explicit(&f->slot->timed, 0, memory_order_relaxed);
}

static inline void cgi_max_loop(cg_counters *c, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(&c->max_ns, memory_order_relaxed);
    while (v > cur &&
           !atomic_compare_exchange_weak_explicit(&c->max_ns, &cur, v, memory_order_relaxed, memory_order_relaxed)) {}
}

/* Out of line: called only for a call longer than the longest so far. */
__attribute__((noinline)) static void cgi_max(cg_counters *c, uint64_t v) { cgi_max_loop(c, v); }

/* Is this thread inside a guarded call that may hold a lock or its slot?
 * The guarded path counts cgi_depth; the counted paths mark only the
 * thread's slot; the lean CPython path neither (it holds neither). */
static inline int cgi_nested(void)
{
    cg_counters *in = atomic_load_explicit(&cgi_my_slot->counters, memory_order_relaxed);
    return cgi_depth > 0 || (in && in != &cgi_no_counters);
}

/* The site whose statistics record is `c` (the base of its variants): a
 * short path keeps no site, and needs one only to record a stall. Without
 * the configuration lock (a stall is recorded while the thread may hold its
 * runtime): layers are only ever added, each published with release
 * (layer_register.c) after its sites were filled in. */
static cg_site *cgi_site_of_counters(const cg_counters *c)
{
    for (cg_layer *l = __atomic_load_n(&cgi_layers, __ATOMIC_ACQUIRE); l; l = l->next)
        for (unsigned i = 0; i < l->nsites; i++)
            if (l->sites[i].ctr == c) return &l->sites[l->sites[i].base];
    return NULL;
}

/* After a counted call made without leaving the runtime: did the thread
 * hold its runtime throughout? It holds it now exactly when it held it on
 * entry, as nothing was left. When it did and the call lasted a stall's
 * length, the stall is counted and recorded (s: the site, or NULL to find
 * it from its record c). Out of line: it may read the Python frame, and
 * keeps errno for the caller. */
__attribute__((noinline)) static int cgi_counted_held(cg_site *s, cg_counters *c, uint64_t t0, uint64_t ns)
{
    const cg_adapter *ad = atomic_load_explicit(&cgi_cfg.adapter, memory_order_acquire);
    if (!ad) return 0;
    int saved = errno;
    int held = ad == &cgi_cpython_adapter ? cgi_py_holds() : ad->holds();
    if (held && ns >= atomic_load_explicit(&cgi_cfg.stall_ns, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&c->stalls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->stall_ns, ns, memory_order_relaxed);
        if (!s) s = cgi_site_of_counters(c);
        if (s) cgi_stall_record(s, ad, t0, ns, 0);
    }
    errno = saved;
    return held;
}

/* A traced counted call with an adapter: the event says whether the
 * runtime was held. */
__attribute__((noinline)) static int cgi_trace_held(cg_site *s, cg_counters *c, uint64_t t0, uint64_t ns, int err)
{
    int held = cgi_counted_held(s, c, t0, ns);
    return cgi_trace_call(c, t0, ns, 0, err, held);
}

/* The driver call, with what the call holds recorded in the thread's
 * record while it is in it (stage 1: cgi_abandon gives it back if the
 * thread never returns). The fences keep the compiler from moving the
 * stores across the call: a signal handler on this thread may read them. */
static inline __attribute__((always_inline)) void cgi_thunk_held(cgi_frame *f, cgi_held *h)
{
    h->domain = f->domain;
    h->peaks = f->peaks;
    atomic_signal_fence(memory_order_seq_cst);
    h->stage = 1;
    atomic_signal_fence(memory_order_seq_cst);
    f->err = f->thunk(f->args);
    f->saved_errno = errno;
    atomic_signal_fence(memory_order_seq_cst);
    h->stage = 0;
    atomic_signal_fence(memory_order_seq_cst);
}

/* cgi_inner for a site with thread rules to check or lock (threads.c):
 * the handle locks before the domain lock, the check inside both, so
 * serialized calls are never reported as overlapping. Their state is kept
 * in the thread's record (a call left without returning gives it back). */
__attribute__((noinline)) static void cgi_inner_threads(cgi_frame *f)
{
    cgi_held *h = f->rec;
    cgi_thr_call *tc = &h->tc;
    int waited = 0;
    if (f->threads & CGI_DOM_HLOCK) waited = cgi_thr_lock(f->site, f->args, tc);
    if (f->domain)
        h->dlock = cgi_domain_lock(f->domain, f->scope, f->key, &waited, f->peaks ? &f->peaks->waiting : NULL);
    if (f->timed && (f->domain || (f->threads & CGI_DOM_HLOCK))) cgi_stats_locked(f, waited);
    if (f->threads & CGI_DOM_CHECK) cgi_thr_check_enter(f->site, f->args, tc);
    if (f->peaks) cgi_peak_in(&f->peaks->inside);
    h->threads = f->threads;
    cgi_thunk_held(f, h);
    h->threads = 0; /* cgi_inner's calls have none */
    if (f->peaks) cgi_peak_out(&f->peaks->inside);
    if (f->threads & CGI_DOM_CHECK) cgi_thr_check_leave(f->site, f->args, tc);
    if (f->timed) cgi_stats_leave(f);
    if (f->domain) cgi_domain_unlock(f->domain, h->dlock);
    if (f->threads & CGI_DOM_HLOCK) cgi_thr_unlock(tc);
}

/* Runs with the runtime left when the site's transition says so. */
static void cgi_inner(void *p)
{
    cgi_frame *f = p;
    cgi_held spare, *h = cgi_my_held;
    if (__builtin_expect(h == NULL, 0)) h = cgi_held_new(&spare);
    f->rec = h;
    if (f->timed) cgi_stats_enter(f);
    if (__builtin_expect(f->threads != 0, 0)) {
        cgi_inner_threads(f);
        return;
    }
    if (f->domain) {
        int waited = 0;
        h->dlock = cgi_domain_lock(f->domain, f->scope, f->key, &waited, f->peaks ? &f->peaks->waiting : NULL);
        if (f->timed) cgi_stats_locked(f, waited);
    }
    if (f->peaks) cgi_peak_in(&f->peaks->inside);
    cgi_thunk_held(f, h);
    if (f->peaks) cgi_peak_out(&f->peaks->inside);
    if (f->timed) cgi_stats_leave(f);
    if (f->domain) cgi_domain_unlock(f->domain, h->dlock);
}

/* Counts a call that returned; held: the runtime it held throughout, if any. */
static void cgi_stats_count(cgi_frame *f, const cg_adapter *held)
{
    cg_counters *c = f->site->ctr;
    f->call_ns = cgi_ticks_ns(f->t1 - f->t0);
    f->wait_ns = f->wait ? cgi_ticks_ns(f->wait) : 0;
    if (f->err) f->err = cgi_stats_result(c, f->err);
    atomic_fetch_add_explicit(&c->total_ns, f->call_ns, memory_order_relaxed);
    if (f->call_ns > atomic_load_explicit(&c->max_ns, memory_order_relaxed)) cgi_max(c, f->call_ns);
    if (f->wait_ns) atomic_fetch_add_explicit(&c->lock_wait_ns, f->wait_ns, memory_order_relaxed);
    uint64_t limit = atomic_load_explicit(&cgi_cfg.stall_ns, memory_order_relaxed);
    if (held && (f->call_ns >= limit || f->wait_ns >= limit)) {
        atomic_fetch_add_explicit(&c->stalls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->stall_ns, f->call_ns + f->wait_ns, memory_order_relaxed);
        cgi_stall_record(f->site, held, f->t0 - f->wait, f->call_ns, f->wait_ns);
    }
}

/* ---- the short paths' counting ------------------------------------------------
 * A counted call, in two halves around the real call (cg_enter, cg_leave and
 * a checked site's counted call). Entering numbers the call in the thread's
 * slot and marks the slot (the in-flight record), then counts the call
 * into the thread's own shard: a plain load and store, no locked
 * instruction (a thread past CGI_SHARDS adds to the record atomically).
 * The slot is marked first: a signal handler's guarded call on this thread
 * then finds it inside a call and counts on the general path, never into
 * the shard this half is writing. No clock: the watchdog times the call by
 * sampling (watchdog.c) unless the mode asks for exact timing. */
static inline __attribute__((always_inline)) void cgi_enter_counted(cg_site *s, cgi_slot *slot)
{
    cg_counters *c = s->ctr;
    cgi_bump(&slot->seq, 1);
    atomic_store_explicit(&slot->counters, c, memory_order_release);
    if (__builtin_expect(slot->owned, 1))
        cgi_bump(&cgi_shard_at(c, slot->shard_off)->calls, 1);
    else
        atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
}

/* The same with the clock started (exact timing, the timeline, a checked site). */
static inline __attribute__((always_inline)) void cgi_enter_timed(cg_site *s, cgi_slot *slot)
{
    atomic_store_explicit(&slot->entered, cgi_tsc(), memory_order_relaxed);
    cgi_enter_counted(s, slot);
}

/* Counts a result other than success into this thread's shard when the
 * record has named the code already (the common case: a polling loop's
 * ZE_RESULT_NOT_READY), else as the general path does. Returns 1 for a
 * failure, as cgi_stats_result. */
static inline __attribute__((always_inline)) int cgi_count_code(cgi_slot *slot, cg_counters *c, int err)
{
    if (__builtin_expect(slot->owned, 1)) {
        cgi_stats_record *r = (cgi_stats_record *)((char *)c - offsetof(cgi_stats_record, c));
        int32_t code = err == CG_RESULT_ZERO ? 0 : err;
        for (unsigned k = 0; k < CGI_STATS_MAX_CODES; k++) {
            uint32_t set = atomic_load_explicit(&r->code[k].set, memory_order_acquire);
            if (set < CGI_CODE_ERROR) break; /* free or being named: codes are claimed in order */
            if (r->code[k].code != code) continue;
            cgi_shard *sh = cgi_shard_at(c, slot->shard_off);
            cgi_bump(&sh->code[k], 1);
            cgi_bump(set == CGI_CODE_STATE ? &sh->states : &sh->errors, 1);
            return set != CGI_CODE_STATE;
        }
    }
    return cgi_stats_result(c, err);
}

/* The end of a timed counted call: stop the clock, leave the slot (no
 * longer in flight), add the time to this thread's shard. Returns the
 * call's ns. */
static inline __attribute__((always_inline)) uint64_t cgi_count_out(cgi_slot *slot, cg_counters *c, uint64_t t0)
{
    uint64_t ns = cgi_ticks_ns(cgi_tsc() - t0);
    atomic_store_explicit(&slot->counters, NULL, memory_order_release);
    if (__builtin_expect(slot->owned, 1))
        cgi_bump(&cgi_shard_at(c, slot->shard_off)->total_ns, ns);
    else
        atomic_fetch_add_explicit(&c->total_ns, ns, memory_order_relaxed);
    return ns;
}

/* After a timed call, for any result. No errno is touched
 * (cgi_counted_held keeps it). A call as long as a stall asks the adapter,
 * if there is one, whether the runtime was held (CGI_PATH_DETECT's rule):
 * where there is none, or it was left, nothing is recorded. */
static inline __attribute__((always_inline)) void cgi_leave_counted(cgi_slot *slot, int err, int traced)
{
    cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_relaxed);
    if (err != 0) err = cgi_count_code(slot, c, err);
    uint64_t t0 = atomic_load_explicit(&slot->entered, memory_order_relaxed);
    uint64_t ns = cgi_count_out(slot, c, t0);
    if (ns > atomic_load_explicit(&c->max_ns, memory_order_relaxed)) cgi_max_loop(c, ns);
    if (traced) {
        if (atomic_load_explicit(&cgi_cfg.adapter, memory_order_relaxed))
            (void)cgi_trace_held(NULL, c, t0, ns, err);
        else
            (void)cgi_trace_call(c, t0, ns, 0, err, 0);
        return;
    }
    if (ns >= atomic_load_explicit(&cgi_cfg.stall_ns, memory_order_relaxed)) cgi_counted_held(NULL, c, t0, ns);
}

/* A clockless call the watchdog marked as long as a stall (it found it in
 * flight for stall_ns or more, and set `entered` when it first saw it):
 * as cgi_leave_counted's test, with the time measured from there, then
 * the slot is left. A mark of an earlier call (set as that one left) is
 * dropped: whether that call held the runtime is no longer known. */
__attribute__((noinline)) static void cgi_leave_marked(cgi_slot *slot)
{
    uint64_t mark = atomic_load_explicit(&slot->mark, memory_order_acquire);
    atomic_store_explicit(&slot->mark, 0, memory_order_relaxed);
    if (mark == atomic_load_explicit(&slot->seq, memory_order_relaxed)) {
        cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_relaxed);
        uint64_t t0 = atomic_load_explicit(&slot->entered, memory_order_relaxed);
        uint64_t now = cgi_ticks();
        cgi_counted_held(NULL, c, t0, now > t0 ? cgi_ticks_ns(now - t0) : 0);
    }
    atomic_store_explicit(&slot->counters, NULL, memory_order_release);
}

/* The end of a clockless counted call: one load (the watchdog's mark),
 * then the slot is left (a tail call when marked: no frame otherwise). */
static inline __attribute__((always_inline)) void cgi_leave_clockless(cgi_slot *slot)
{
    if (__builtin_expect(atomic_load_explicit(&slot->mark, memory_order_relaxed) != 0, 0)) {
        cgi_leave_marked(slot);
        return;
    }
    atomic_store_explicit(&slot->counters, NULL, memory_order_release);
}

/* A site whose only work is checking its thread rules (no lock, no runtime;
 * statistics off, or counted on a TSC with `slot`): the check around the
 * call and nothing else. Timed like the general path. */
__attribute__((noinline)) static int cgi_call_checked(cg_site *s, cg_thunk thunk, void *args, cgi_slot *slot)
{
    cgi_thr_call tc;
    cgi_thr_check_enter(s, args, &tc);
    if (slot) {
        /* Inside the call the slot says so (cgi_nested), as on the counted path. */
        atomic_store_explicit(&slot->timed, 1, memory_order_relaxed);
        cgi_enter_timed(s, slot);
        cgi_leave_counted(slot, thunk(args), 0);
        atomic_store_explicit(&slot->timed, 0, memory_order_relaxed);
    } else {
        cgi_depth++;
        thunk(args);
        cgi_depth--;
    }
    cgi_thr_check_leave(s, args, &tc);
    return 0;
}

/* Everything: what the other paths leave here. */
__attribute__((noinline)) static int cgi_call_guarded(cg_site *s, const void *key, cg_thunk thunk, void *args)
{
    if (!atomic_load_explicit(&s->real, memory_order_acquire)) {
        void *real = cgi_resolve_site(s->layer, s->name);
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

    if (cgi_nested() && cgi_still_inside(s)) {
        /* A driver callback or a second layer calling back in on this thread:
         * taking the domain lock again would deadlock. (An atomic add
         * leaves errno alone.) */
        if (stats) {
            atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&c->nested, 1, memory_order_relaxed);
        }
        int err = thunk(args);
        if (stats && err) cgi_stats_result(c, err);
        return 0;
    }

    uint32_t dom = atomic_load_explicit(&s->domain, memory_order_acquire);
    if (dom == CGI_DOM_CHECK && !atomic_load_explicit(&cgi_cfg.adapter, memory_order_relaxed)) {
        /* Checked and nothing else: the check around the call, counted as
         * cg_enter's counted mode counts it when statistics are on. */
        if (!stats) return cgi_call_checked(s, thunk, args, NULL);
        if (atomic_load_explicit(&cgi_cfg.path, memory_order_relaxed) == CGI_PATH_COUNTED &&
            !atomic_load_explicit(&cgi_my_slot->counters, memory_order_relaxed))
            return cgi_call_checked(s, thunk, args, cgi_my_slot);
    }

    cgi_frame f = {.site = s, .key = key, .thunk = thunk, .args = args, .timed = stats};
    if (stats) {
        cgi_slot *slot = cgi_my_slot;
        if (slot == &cgi_unclaimed_slot) {
            /* The process's first timed call makes its statistics file. */
            pthread_mutex_lock(&cgi_cfg_lock);
            cgi_stats_keep();
            pthread_mutex_unlock(&cgi_cfg_lock);
            slot = cgi_slot_claim();
            /* The claim calibrated the clock: is there a TSC? */
            pthread_mutex_lock(&cgi_cfg_lock);
            cgi_path_refresh();
            pthread_mutex_unlock(&cgi_cfg_lock);
        }
        /* The process's first counted call starts its watchdog. */
        cgi_watchdog_start();
        f.slot = slot == &cgi_spare_slot ? NULL : slot;
    }
    f.domain = dom & CGI_DOM_ID;
    f.threads = dom & ~CGI_DOM_ID;
    /* Peaks are exact where they matter and cheap to count: a serialized or
     * blocking site, whose lock or driver work dwarfs two atomic adds on one
     * shared line (docs/report.md, "peak_inside"). Of the short paths only
     * a blocking site's (CGI_MODE_PEAKS) counts them: one shared atomic per
     * call is what the others' shards avoid. */
    if (stats && (f.domain || atomic_load_explicit(&s->blocking, memory_order_relaxed))) f.peaks = c;
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

    if (f.slot) {
        /* The call's number, and what a hang report says of it: the
         * runtime held through it, and the Python line (read now, while
         * this thread holds the GIL, even when the call then leaves it). */
        uint64_t seq = atomic_load_explicit(&f.slot->seq, memory_order_relaxed) + 1;
        atomic_store_explicit(&f.slot->seq, seq, memory_order_relaxed);
        if (held) atomic_store_explicit(&f.slot->held_seq, seq, memory_order_relaxed);
        if ((held || leave) && ad == &cgi_cpython_adapter &&
            atomic_load_explicit(&cgi_cfg.hang_ns, memory_order_relaxed))
            cgi_where_note(f.slot, seq);
    }
    cgi_depth++;
    if (leave) {
        /* An adapter that could not leave says so (cg_adapter_ran_held):
         * then the call held the runtime. (A guarded call made inside fn on
         * this thread is nested: it goes straight through, never here.) */
        cgi_ran_held = 0;
        ad->call_outside(cgi_inner, &f);
        held = cgi_ran_held;
    } else {
        cgi_inner(&f);
    }
    cgi_depth--;

    if (stats) {
        cgi_stats_count(&f, held ? ad : NULL);
        /* Tracing (trace.c): one predictable branch when off. */
        if (__builtin_expect(atomic_load_explicit(&cgi_cfg.trace_on, memory_order_relaxed), 0))
            cgi_trace_call(c, f.t0, f.call_ns, f.wait_ns, f.err, held);
    }
    errno = f.saved_errno;
    return 0;
}

/* Every short path is cg_enter's: a wrapper calls cg_call only when cg_enter
 * declined the call (layer.h), so what is left is the general path. */
int cg_call(cg_site *s, const void *key, cg_thunk thunk, void *args) { return cgi_call_guarded(s, key, thunk, args); }

/* ---- cg_enter / cg_leave: the short paths without a frame (layer.h) ----------
 * The wrapper makes the real call itself between the two. The token says
 * what cg_enter did, so cg_leave reads no configuration to undo it: its low
 * 3 bits are a tag (slots are 64-byte aligned; a PyThreadState is a C
 * struct of pointers, at least 8-byte aligned), the rest a pointer. */
enum {
    CGI_TOK_COUNTED =
        0,              /* slot: counted, clockless (CGI_MODE_COUNTED, CGI_MODE_WATCH, or COUNTED_PY holding nothing) */
    CGI_TOK_TIMED = 1,  /* slot | 1: counted, the clock read (CGI_MODE_TIMED) */
    CGI_TOK_TRACED = 2, /* slot | 2: counted, timed and recorded on the timeline */
    CGI_TOK_LEFT_TIMED = 3, /* thread state | 3: CGI_TOK_LEFT, the clock read */
    CGI_TOK_LEAN = 4,       /* thread state | 4: the GIL left, nothing counted */
    CGI_TOK_LEFT = 5,       /* thread state | 5: counted with the GIL left (this thread's slot) */
    CGI_TOK_NOTHING = 6,    /* nothing to undo (lean, the GIL not this thread's) */
    CGI_TOK_PEAKS = 7,      /* slot | 7: CGI_TOK_COUNTED, and the site's peak inside counted (a blocking site) */
    CGI_TOK_TAG = 7
};

/* CGI_MODE_WATCH's entry: whether this thread holds its runtime, and for
 * CPython the Python line, for a hang report (hang reports are on).
 * Before the call is numbered: `seq + 1` is the call's. */
__attribute__((noinline)) static void cgi_enter_watch(cgi_slot *slot)
{
    const cg_adapter *ad = atomic_load_explicit(&cgi_cfg.adapter, memory_order_acquire);
    if (!ad) return;
    int saved = errno;
    uint64_t seq = atomic_load_explicit(&slot->seq, memory_order_relaxed) + 1;
    if (ad == &cgi_cpython_adapter ? cgi_py_holds() : ad->holds()) {
        atomic_store_explicit(&slot->held_seq, seq, memory_order_relaxed);
        if (ad == &cgi_cpython_adapter) cgi_where_note(slot, seq);
    }
    errno = saved;
}

/* CGI_MODE_PEAKS's entry and leaving (a blocking site counted in the
 * runtime, not by its layer: cg_site_peaks): clockless as CGI_MODE_COUNTED,
 * and the site's threads inside counted around the call, so that its peak
 * is exact (docs/report.md, "peak_inside"). */
static inline uintptr_t cgi_enter_peaks(cg_site *s, cgi_slot *slot)
{
    cgi_enter_counted(s, slot);
    cgi_peak_in(&s->ctr->inside);
    return (uintptr_t)slot | CGI_TOK_PEAKS;
}
static inline void cgi_leave_peaks(cgi_slot *slot, int code)
{
    cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_relaxed);
    cgi_peak_out(&c->inside);
    if (code) cgi_count_code(slot, c, code);
    cgi_leave_clockless(slot);
}

/* CGI_MODE_PEAKS_PY with the GIL held: left, the call counted and its peak
 * inside counted, which the slot says (cgi_leave_left takes it off). */
__attribute__((noinline)) static uintptr_t cgi_enter_peaks_py(cg_site *s, cgi_slot *slot)
{
    void *ts = cgi_py.save();
    cgi_enter_counted(s, slot);
    slot->peaked = 1;
    cgi_peak_in(&s->ctr->inside);
    return (uintptr_t)ts | CGI_TOK_LEFT;
}

/* The modes after the commonest, out of line. */
__attribute__((noinline)) static uintptr_t cgi_enter_other(cg_site *s, uint32_t mode)
{
    if (mode == CGI_MODE_NONE) return 0; /* first: the general path pays least */
    if (mode == CGI_MODE_PEAKS_PY) {
        /* CGI_MODE_PEAKS (cg_enter), leaving CPython when this thread holds it. */
        cgi_slot *slot = cgi_my_slot;
        if (atomic_load_explicit(&slot->counters, memory_order_relaxed)) return 0;
        if (cgi_py_holds()) return cgi_enter_peaks_py(s, slot);
        return cgi_enter_peaks(s, slot);
    }
    if (mode == CGI_MODE_LEAN) {
        /* The interpreter not looked up when the mode was computed:
         * holds() looks it up; then the site gets the mode for it. */
        if (cgi_depth != 0) return 0;
        int held = cgi_py_holds();
        uint32_t lean = CGI_MODE_LEAN, want = cgi_mode_lean();
        if (want != CGI_MODE_LEAN)
            atomic_compare_exchange_strong_explicit(&s->mode, &lean, want, memory_order_release, memory_order_relaxed);
        return held ? (uintptr_t)cgi_py.save() | CGI_TOK_LEAN : CGI_TOK_NOTHING;
    }
    cgi_slot *slot = cgi_my_slot;
    if (atomic_load_explicit(&slot->counters, memory_order_relaxed)) return 0;
    if (mode == CGI_MODE_WATCH) {
        cgi_enter_watch(slot);
        cgi_enter_counted(s, slot);
        return (uintptr_t)slot;
    }
    if (mode != CGI_MODE_COUNTED_PY) return 0;
    /* A call on a thread that holds nothing is counted and no stall; else
     * the call is counted once the GIL is left (and the clock, if read,
     * stops before re-entry: cgi_leave_left). */
    int exact = atomic_load_explicit(&cgi_cfg.timing, memory_order_relaxed) == CGI_TIMING_EXACT;
    if (!cgi_py_holds()) {
        if (!exact) {
            cgi_enter_counted(s, slot);
            return (uintptr_t)slot;
        }
        cgi_enter_timed(s, slot);
        return (uintptr_t)slot | CGI_TOK_TIMED;
    }
    if (atomic_load_explicit(&cgi_cfg.hang_ns, memory_order_relaxed))
        cgi_where_note(slot, atomic_load_explicit(&slot->seq, memory_order_relaxed) + 1);
    void *ts = cgi_py.save();
    if (!exact) {
        cgi_enter_counted(s, slot);
        return (uintptr_t)ts | CGI_TOK_LEFT;
    }
    cgi_enter_timed(s, slot);
    return (uintptr_t)ts | CGI_TOK_LEFT_TIMED;
}

uintptr_t cg_enter(cg_site *s)
{
    uint32_t mode = atomic_load_explicit(&s->mode, memory_order_acquire);
    if (__builtin_expect(mode == CGI_MODE_COUNTED, 1)) {
        cgi_slot *slot = cgi_my_slot;
        /* Inside a call already (nested, or no slot of its own yet): cg_call. */
        if (atomic_load_explicit(&slot->counters, memory_order_relaxed)) return 0;
        cgi_enter_counted(s, slot);
        return (uintptr_t)slot;
    }
    /* cg_call's lean path: not inside a guarded call that may hold a lock;
     * the GIL left when this thread holds it (python.h). The mode says
     * which interpreter it is. */
    if (mode == CGI_MODE_LEAN_PT) {
        if (cgi_depth != 0) return 0;
        if (__builtin_expect(cgi_py_holds_per_thread(), 1)) return (uintptr_t)cgi_py.save() | CGI_TOK_LEAN;
        return CGI_TOK_NOTHING;
    }
    if (mode == CGI_MODE_LEAN_SH) {
        if (cgi_depth != 0) return 0;
        if (__builtin_expect(cgi_py_holds_shared(), 1)) return (uintptr_t)cgi_py.save() | CGI_TOK_LEAN;
        return CGI_TOK_NOTHING;
    }
    if (mode == CGI_MODE_TIMED || mode == CGI_MODE_TRACED) {
        /* Here rather than in cgi_enter_other: every call of a run with
         * exact timing or a timeline (after the lean modes, which stay first). */
        cgi_slot *slot = cgi_my_slot;
        if (atomic_load_explicit(&slot->counters, memory_order_relaxed)) return 0;
        cgi_enter_timed(s, slot);
        return (uintptr_t)slot | (mode == CGI_MODE_TIMED ? CGI_TOK_TIMED : CGI_TOK_TRACED);
    }
    if (mode == CGI_MODE_PEAKS) {
        /* A blocking site (a launch, a compile, a wait) made blocking at run
         * time: the layer's short path counts one its policy marks itself. */
        cgi_slot *slot = cgi_my_slot;
        if (atomic_load_explicit(&slot->counters, memory_order_relaxed)) return 0;
        return cgi_enter_peaks(s, slot);
    }
    return cgi_enter_other(s, mode);
}

/* Out of line: a timed call longer than any before at its site, or as
 * long as a stall. */
__attribute__((noinline)) static void cgi_leave_long(cg_counters *c, uint64_t t0, uint64_t ns)
{
    cgi_max_loop(c, ns);
    if (ns >= atomic_load_explicit(&cgi_cfg.stall_ns, memory_order_relaxed)) cgi_counted_held(NULL, c, t0, ns);
}

/* CGI_TOK_LEFT and CGI_TOK_LEFT_TIMED: the call held nothing, so it is no
 * stall; the clock, if read, stops before re-entering (docs/development.md,
 * "CPython": it may never return from it at exit). The slot is this
 * thread's, as on entry. */
static void cgi_leave_left(void *ts, int code, int timed)
{
    cgi_slot *slot = cgi_my_slot;
    cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_relaxed);
    if (slot->peaked) {
        slot->peaked = 0;
        cgi_peak_out(&c->inside);
    }
    if (code) cgi_count_code(slot, c, code);
    if (timed) {
        uint64_t ns = cgi_count_out(slot, c, atomic_load_explicit(&slot->entered, memory_order_relaxed));
        if (ns > atomic_load_explicit(&c->max_ns, memory_order_relaxed)) cgi_max_loop(c, ns);
    } else {
        atomic_store_explicit(&slot->counters, NULL, memory_order_release);
    }
    cgi_py.restore(ts);
}

/* Everything but a successful clockless call and the lean path. */
__attribute__((noinline)) static void cgi_leave_other(uintptr_t tok, int code)
{
    void *p = (void *)(tok & ~(uintptr_t)CGI_TOK_TAG);
    switch (tok & CGI_TOK_TAG) {
    case CGI_TOK_COUNTED:
        if (code) cgi_count_code(p, atomic_load_explicit(&((cgi_slot *)p)->counters, memory_order_relaxed), code);
        cgi_leave_clockless(p);
        return;
    case CGI_TOK_TIMED: cgi_leave_counted(p, code, 0); return;
    case CGI_TOK_TRACED: cgi_leave_counted(p, code, 1); return;
    case CGI_TOK_LEAN: cgi_py.restore(p); return;
    case CGI_TOK_LEFT: cgi_leave_left(p, code, 0); return;
    case CGI_TOK_LEFT_TIMED: cgi_leave_left(p, code, 1); return;
    case CGI_TOK_PEAKS: cgi_leave_peaks(p, code); return;
    default: return; /* CGI_TOK_NOTHING */
    }
}

void cg_leave(uintptr_t tok)
{
    if (__builtin_expect((tok & CGI_TOK_TAG) == CGI_TOK_COUNTED, 1)) {
        /* A successful clockless call: one load and one store, but for a
         * call the watchdog marked. */
        cgi_leave_clockless((cgi_slot *)tok);
        return;
    }
    /* (Not `(tok & CGI_TOK_TAG) == CGI_TOK_LEAN`: GCC would then compute the tag
     * for the test above too, one instruction more on the counted path.) */
    if (((tok - CGI_TOK_LEAN) & CGI_TOK_TAG) == 0) {
        /* The lean path's re-entry (CPython keeps errno across it). */
        cgi_py.restore((void *)(tok & ~(uintptr_t)CGI_TOK_TAG));
        return;
    }
    if (((tok - CGI_TOK_TIMED) & CGI_TOK_TAG) == 0) {
        /* A successful timed call (exact timing): a leaf but for its rare
         * tail call (a call longer than any before at its site, or as long
         * as a stall). */
        cgi_slot *slot = (cgi_slot *)(tok - CGI_TOK_TIMED);
        cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_relaxed);
        uint64_t t0 = atomic_load_explicit(&slot->entered, memory_order_relaxed);
        uint64_t ns = cgi_count_out(slot, c, t0);
        if (__builtin_expect(ns > atomic_load_explicit(&c->max_ns, memory_order_relaxed), 0) ||
            __builtin_expect(ns >= atomic_load_explicit(&cgi_cfg.stall_ns, memory_order_relaxed), 0))
            cgi_leave_long(c, t0, ns);
        return;
    }
    if (((tok - CGI_TOK_TRACED) & CGI_TOK_TAG) == 0) {
        /* A traced run's every call: no switch. */
        cgi_leave_counted((cgi_slot *)(tok - CGI_TOK_TRACED), 0, 1);
        return;
    }
    cgi_leave_other(tok, 0);
}

void cg_leave_code(uintptr_t tok, int code)
{
    if (__builtin_expect((tok & CGI_TOK_TAG) == CGI_TOK_COUNTED, 1)) {
        /* A clockless call that returned a failure or a state: counted in
         * this thread's shard. */
        cgi_slot *slot = (cgi_slot *)tok;
        cgi_count_code(slot, atomic_load_explicit(&slot->counters, memory_order_relaxed), code);
        cgi_leave_clockless(slot);
        return;
    }
    cgi_leave_other(tok, code);
}
