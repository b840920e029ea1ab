/* The short paths: a guarded call counted, its runtime left, or both, and
 * nothing else (docs/design.md, "One guarded call"). cg_enter and cg_leave
 * make it around the wrapper's own call of the real function, with no
 * frame, thunk or lock; a site whose only work is checking its thread
 * rules is counted the same way around its check. What they decline goes
 * to cg_call (call.c). */
#define _GNU_SOURCE
#include "short.h"

#include "clock.h"
#include "python.h"
#include "site.h"
#include "stall.h"
#include "stats.h"
#include "threads.h"
#include "trace.h"

#include <errno.h>

__thread int cgi_depth __attribute__((tls_model("initial-exec")));

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
    cgi_slot_number_elsewhere(slot);
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

/* Timed like the general path. */
int cgi_call_checked(cg_site *s, cg_thunk thunk, void *args, cgi_slot *slot)
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

int cgi_call_traced(cg_site *s, cg_thunk thunk, void *args)
{
    cgi_slot *slot = cgi_my_slot;
    if (atomic_load_explicit(&slot->counters, memory_order_relaxed)) return 0;
    cgi_enter_timed(s, slot);
    int err = thunk(args);
    cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_relaxed);
    if (err != 0) err = cgi_count_code(slot, c, err);
    uint64_t t0 = atomic_load_explicit(&slot->entered, memory_order_relaxed);
    uint64_t ns = cgi_count_out(slot, c, t0);
    if (ns > atomic_load_explicit(&c->max_ns, memory_order_relaxed)) cgi_max_loop(c, ns);
    int held = atomic_load_explicit(&cgi_cfg.adapter, memory_order_relaxed) ? cgi_counted_held(s, c, t0, ns) : 0;
    (void)cgi_trace_call_frame(s, args, t0, ns, 0, err, held);
    return 1;
}

/* ---- a site's call with its arguments on the timeline (layer_args.h) --------
 * The layer's short path makes the call and stores the event's words
 * itself; these are CGI_MODE_TRACED's entry and leaving around it, and
 * cgi_call_traced's after a code other than success. */
_Static_assert(CGI_MODE_TRACED_ARGS == CG_MODE_TRACED_ARGS, "layer_args.h's mode");
uintptr_t cg_enter_args(cg_site *s)
{
    cgi_slot *slot = cgi_my_slot;
    if (atomic_load_explicit(&slot->counters, memory_order_relaxed)) return 0;
    cgi_enter_timed(s, slot);
    return (uintptr_t)slot;
}

void cg_leave_args(uintptr_t tok, const uint64_t *w, uint32_t n, uint32_t outs)
{
    cgi_slot *slot = (cgi_slot *)tok;
    cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_relaxed);
    uint64_t t0 = atomic_load_explicit(&slot->entered, memory_order_relaxed);
    uint64_t ns = cgi_count_out(slot, c, t0);
    if (__builtin_expect(ns > atomic_load_explicit(&c->max_ns, memory_order_relaxed), 0)) cgi_max_loop(c, ns);
    if (atomic_load_explicit(&cgi_cfg.adapter, memory_order_relaxed) && cgi_counted_held(NULL, c, t0, ns))
        outs |= CGI_EV_HELD;
    (void)cgi_trace_words(c, t0, ns, outs, w, n);
}

void cg_leave_args_code(cg_site *s, uintptr_t tok, int code, const uint64_t *w, uint32_t n)
{
    cgi_slot *slot = (cgi_slot *)tok;
    cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_relaxed);
    int err = cgi_count_code(slot, c, code);
    uint64_t t0 = atomic_load_explicit(&slot->entered, memory_order_relaxed);
    uint64_t ns = cgi_count_out(slot, c, t0);
    if (ns > atomic_load_explicit(&c->max_ns, memory_order_relaxed)) cgi_max_loop(c, ns);
    int held = atomic_load_explicit(&cgi_cfg.adapter, memory_order_relaxed) && cgi_counted_held(s, c, t0, ns);
    (void)cgi_trace_words_code(s->args, c, t0, ns, (err ? CGI_EV_ERROR : 0) | (held ? CGI_EV_HELD : 0), w, n);
}

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
    if (atomic_load_explicit(&cgi_cfg.hang_ns, memory_order_relaxed))
        cgi_where_note(slot, atomic_load_explicit(&slot->seq, memory_order_relaxed) + 1);
    void *ts = cgi_py.save();
    cgi_enter_counted(s, slot);
    slot->peaked = 1;
    cgi_peak_in(&s->ctr->inside);
    return (uintptr_t)ts | CGI_TOK_LEFT;
}

/* The modes after the commonest, out of line. */
__attribute__((noinline)) static uintptr_t cgi_enter_other(cg_site *s, uint32_t mode)
{
    if (mode == CGI_MODE_NONE || mode == CGI_MODE_TRACED_ARGS) return 0; /* first: the general path pays least */
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
    if (mode == CGI_MODE_PEAKS_WATCH) {
        cgi_enter_watch(slot);
        return cgi_enter_peaks(s, slot);
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
