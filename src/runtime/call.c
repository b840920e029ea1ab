/* The general path of a guarded call: everything a wrapper does when its
 * site has a policy, statistics or a runtime to leave, in the order of
 * docs/design.md, "One guarded call": leave the runtime before taking the
 * domain lock, stop the clock before re-entering the runtime (CPython may
 * never return from re-entry at exit), never call into the runtime while
 * holding a domain lock. What happens once (a site's first call, a
 * thread's first counted call) is out of that order, in its own functions. */
#define _GNU_SOURCE
#include "call.h"

#include "clock.h"
#include "domain.h"
#include "held.h"
#include "python.h"
#include "resolve.h"
#include "short.h"
#include "site.h"
#include "stall.h"
#include "stats.h"
#include "threads.h"
#include "trace.h"
#include "watchdog.h"

#include <errno.h>

/* Set by cg_adapter_ran_held(): the adapter's call_outside is running fn
 * with the runtime held (read by the general path after call_outside). */
static __thread int cgi_ran_held __attribute__((tls_model("initial-exec")));

void cg_adapter_ran_held(void) { cgi_ran_held = 1; }

void cgi_call_after_fork_child(void)
{
    cgi_depth = 0;
    cgi_held_after_fork_child();
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
    uint64_t once_n; /* scope once, closed: the call's number among those through the gate (under its lock) */
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

/* The driver call, with what the call holds recorded in the thread's
 * record while it is in it (stage 1: held.c gives it back if the
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
    if (__builtin_expect(f->scope == CG_SCOPE_ONCE, 0) && f->domain) f->once_n = cgi_stats_once_ran(f->site->ctr);
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
    if (__builtin_expect(f->scope == CG_SCOPE_ONCE, 0) && f->domain) f->once_n = cgi_stats_once_ran(f->site->ctr);
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

/* ---- once: a site's first call, a thread's first counted call ---------------- */

/* A site's first call: its real function, found before any lock or runtime
 * transition. Under the configuration lock: a policy written at this
 * moment must not be overtaken by a refresh computed from the policy
 * before it. */
__attribute__((noinline, cold)) static int cgi_site_first_call(cg_site *s)
{
    void *real = cgi_resolve_site(s->layer, s->name);
    if (!real) return -1;
    pthread_mutex_lock(&cgi_cfg_lock);
    atomic_store_explicit(&s->real, real, memory_order_release);
    cgi_site_refresh(s);
    /* Its policy leaves it uncounted (count = no): the process made a guarded call all the same, and gets
     * its statistics file, whose record says it was called (the report's "uncounted", "not_counted"). */
    if (atomic_load(&s->uncounted) && atomic_load(&cgi_cfg.stats_on)) {
        cgi_stats_keep();
        cgi_stats_note_uncounted_call(s);
    }
    pthread_mutex_unlock(&cgi_cfg_lock);
    return 0;
}

/* A thread's first counted call (its slot still cgi_unclaimed_slot, as
 * again in a forked child): the process's first makes its statistics file;
 * the thread claims a slot, which calibrates the clock, and the paths are
 * recomputed for it (is there a TSC?). */
__attribute__((noinline, cold)) static cgi_slot *cgi_thread_first_counted(void)
{
    pthread_mutex_lock(&cgi_cfg_lock);
    cgi_stats_keep();
    pthread_mutex_unlock(&cgi_cfg_lock);
    cgi_slot *slot = cgi_slot_claim();
    pthread_mutex_lock(&cgi_cfg_lock);
    cgi_path_refresh();
    pthread_mutex_unlock(&cgi_cfg_lock);
    return slot;
}

/* ---- the steps of a call --------------------------------------------------------- */

/* A call made inside another on this thread (a driver callback, a second
 * layer calling back in): straight to the driver, counted as nested, since
 * taking the domain lock again would deadlock. (An atomic add leaves errno
 * alone.) */
static inline int cgi_call_nested(cg_site *s, cg_thunk thunk, void *args, int stats)
{
    cg_counters *c = s->ctr;
    if (stats) {
        atomic_fetch_add_explicit(&c->calls, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->nested, 1, memory_order_relaxed);
    }
    int err = thunk(args);
    if (stats && err) cgi_stats_result(c, err);
    return 0;
}

/* This thread's slot for a counted call, or NULL where it has none of its
 * own (cgi_spare_slot: its clock is kept in the frame alone). */
static inline cgi_slot *cgi_call_slot(void)
{
    cgi_slot *slot = cgi_my_slot;
    if (slot == &cgi_unclaimed_slot) slot = cgi_thread_first_counted();
    /* The process's first counted call starts its watchdog; a later one
     * starts it again where none runs (a forked child, a watchdog that
     * ended, one that the configuration kept from starting before). */
    cgi_watchdog_start();
    return slot == &cgi_spare_slot ? NULL : slot;
}

/* The site's policy, read once (`dom`: its domain word): domain, thread
 * rules, peaks, scope. */
static inline void cgi_frame_policy(cgi_frame *f, uint32_t dom, int stats)
{
    cg_site *s = f->site;
    f->domain = dom & CGI_DOM_ID;
    f->threads = dom & ~CGI_DOM_ID;
    /* Peaks are exact where they matter and cheap to count: a serialized or
     * blocking site, whose lock or driver work dwarfs two atomic adds on one
     * shared line (docs/report.md, "peak_inside"). Of the short paths only
     * a blocking site's (CGI_MODE_PEAKS) counts them: one shared atomic per
     * call is what the others' shards avoid. */
    if (stats && (f->domain || atomic_load_explicit(&s->blocking, memory_order_relaxed))) f->peaks = s->ctr;
    f->scope = atomic_load_explicit(&s->scope, memory_order_relaxed);
}

/* Does this thread hold its runtime (adapter `ad`) through the call? Asked
 * when the call may leave it or is counted. *leave: the call leaves it
 * (then it is not held through the call). */
static inline int cgi_runtime_held(const cg_site *s, const cg_adapter *ad, int stats, int *leave)
{
    uint32_t t = atomic_load_explicit(&s->transition, memory_order_relaxed);
    int wants = t == CG_TRANSITION_ALWAYS ||
                (t == CG_TRANSITION_BLOCKING && atomic_load_explicit(&s->blocking, memory_order_relaxed));
    int active = atomic_load_explicit(&cgi_cfg.adapter_mode, memory_order_relaxed) == CG_ADAPTER_ACTIVE;
    int held = 0;
    if ((active && wants) || stats) held = ad == &cgi_cpython_adapter ? cgi_py_holds() : ad->holds();
    *leave = held && active && wants;
    return *leave ? 0 : held;
}

/* The call's number in the slot, and what a hang report says of it: the
 * runtime held through it, and the Python line (read now, while this
 * thread holds the GIL, even when the call then leaves it). */
static inline void cgi_slot_number(cgi_slot *slot, const cg_adapter *ad, int held, int leave)
{
    cgi_slot_number_elsewhere(slot);
    uint64_t seq = atomic_load_explicit(&slot->seq, memory_order_relaxed) + 1;
    atomic_store_explicit(&slot->seq, seq, memory_order_relaxed);
    if (held) atomic_store_explicit(&slot->held_seq, seq, memory_order_relaxed);
    if ((held || leave) && ad == &cgi_cpython_adapter && atomic_load_explicit(&cgi_cfg.hang_ns, memory_order_relaxed))
        cgi_where_note(slot, seq);
}

/* Every short path is cg_enter's: a wrapper calls cg_call only when cg_enter
 * declined the call (layer.h), so what is left is the general path, every
 * step of it. */
int cg_call(cg_site *s, const void *key, cg_thunk thunk, void *args)
{
    /* A traced call that carries its arguments: CGI_MODE_TRACED's call, with the frame (short.c). */
    if (__builtin_expect(atomic_load_explicit(&s->mode, memory_order_acquire) == CGI_MODE_TRACED_ARGS, 0) &&
        cgi_call_traced(s, thunk, args))
        return 0;
    if (!atomic_load_explicit(&s->real, memory_order_acquire)) {
        if (cgi_site_first_call(s) != 0) return -1;
        /* Resolved idle (an uncounted site with statistics on among them):
         * its first call goes straight through, as the next ones will. */
        if (atomic_load_explicit(&s->direct, memory_order_acquire)) return (void)thunk(args), 0;
    }
    int stats = atomic_load_explicit(&cgi_cfg.stats_on, memory_order_relaxed);
    if (cgi_nested() && cgi_still_inside(s)) return cgi_call_nested(s, thunk, args, stats);

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
    if (stats) f.slot = cgi_call_slot();
    cgi_frame_policy(&f, dom, stats);
    const cg_adapter *ad = atomic_load_explicit(&cgi_cfg.adapter, memory_order_acquire);
    int leave = 0, held = ad ? cgi_runtime_held(s, ad, stats, &leave) : 0;
    if (f.slot) cgi_slot_number(f.slot, ad, held, leave);

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

    /* Serialized until its first success: this one opens it (site.c). */
    if (__builtin_expect(f.scope == CG_SCOPE_ONCE, 0) && f.domain && f.err == 0) cgi_site_open(s, f.domain, f.once_n);
    if (stats) {
        cgi_stats_count(&f, held ? ad : NULL);
        /* Tracing (trace.c): one predictable branch when off. */
        if (__builtin_expect(atomic_load_explicit(&cgi_cfg.trace_on, memory_order_relaxed), 0))
            cgi_trace_call_frame(s, args, f.t0, f.call_ns, f.wait_ns, f.err, held);
    }
    errno = f.saved_errno;
    return 0;
}
