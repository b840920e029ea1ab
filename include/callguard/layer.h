/* callguard/layer.h: the contract between a generated API layer and libcallguard. Generated code includes this;
 * programs that only use callguard's C API include callguard/callguard.h instead.
 *
 * A layer is a table of sites (one per entry point) and one exported wrapper per entry point. The wrapper's fast path
 * is a single load:
 *
 *     fn = atomic_load(&site->direct);  if (fn) return fn(args...);
 *
 * `direct` holds the real function only while the site has nothing to do (resolved, no statistics, no lock, no
 * runtime transition). Before it the wrapper makes a plain counted call itself when the site's `counted` says so
 * (cg_site_counted, below). Otherwise the wrapper jumps to its out-of-line rest, which for a site its policy marks
 * blocking first makes the counted call itself with the site's threads inside counted (cg_site_peaks), else asks
 * cg_enter() whether the call can take a short path (statistics counted, the CPython GIL left, or both, and nothing
 * else: the site's precomputed `mode`); if so it makes the real call itself and then calls cg_leave(), with no frame
 * and no thunk. Else (a lock, thread rules, another runtime's adapter, a call nested in another, the first call of a
 * site) it packs its arguments into a frame and calls cg_call(), the general path, which does the nesting check, the
 * lock, the runtime transition and the bookkeeping, and calls back the generated thunk to make the real call.
 *
 * Names. A generated layer's own names (its site table cgl_sites, site indices CGL_<entry point>, frames struct
 * cgl_fr_<entry point>, thunks cgl_th_<entry point>, the short paths cgl_sl_<entry point> and the general path
 * cgl_gp_<entry point> of each wrapper, the cold ends of a counted call cgl_left and cgl_left_<entry point>, the
 * descriptor cgl_layer, cgl_result_name, ...) are prefixed cgl_ / CGL_: static to the layer, never to be confused
 * with the public cg_ API of callguard.h. What this header declares is the cg_ ABI between layers and libcallguard.
 * CG_LIBRARY_PATH_<API> is set by the build (the real library's absolute path, the last resort).
 *
 * Files. callguard-gen POLICY.ini -o DIR writes
 *   DIR/cg_<api>.c              the layer;
 *   DIR/cg_<api>_passthrough.h  when the policy has pass-through names: `#define CGL_PT_COUNT n` and
 *                               one `CGL_PT(index, name)` line per name, no include guard.
 * A layer with pass-through names is built from cg_<api>.c plus passthrough.S (src/layers/passthrough.S, installed as
 * share/callguard/passthrough.S), assembled with -DCGL_PASSTHROUGH_LIST="DIR/cg_<api>_passthrough.h": it includes the
 * list to lay out one trampoline per name (an exported `jmp *slot`, the slot resolved on the first call through
 * cgl_pt_resolve, every argument register kept). cg_<api>.c includes the same list for the names. callguard_add_layer
 * does both. Built without passthrough.S (a shim that forwards other names through its DT_NEEDED), the layer still
 * compiles and links; it just exports no pass-through names.
 *
 * Hand-written wrappers. An entry point whose policy section says `wrapper = hand` (its suffix variants follow it)
 * keeps its site, policy, frame and thunk, and the generated guarded call becomes
 *     static RET cgl_guarded_<name>(PARAMS)
 * instead of the exported wrapper. The exported wrapper is written by hand in cg_<api>_hand.c, which cg_<api>.c
 * #includes at its end (found beside it, or on the include path: callguard's own layers keep DIR in
 * src/layers/<api>/generated/, the hand-written file above it): one translation unit, so the hand-written code sees
 * cgl_sites, CGL_<name>, cgl_guarded_<name> and cgl_layer. It defines each such entry point with the header's
 * prototype and CG_EXPORT. A resolver (cuGetProcAddress) maps the real functions it gets to guarded wrappers with
 * cg_wrapper_by_address. `wrapper = forward` instead gives a declared name no site at all: it joins the pass-through
 * names.
 */
#ifndef CALLGUARD_LAYER_H
#define CALLGUARD_LAYER_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "layer_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is exported from libcallguard, whatever the
 * visibility the including code builds with. */
#pragma GCC visibility push(default)

/* 2: cgl_ names, the wrapper table, a missing-library stub, passthrough.S.
 * 3: thread rules: each site's handle parameters (cg_rule), in its default and site.
 * 4: a thunk returns the result code itself (not 0/1); each site's default lists the codes that report a state; the
 * layer maps code names back.
 * 5: a layer's driver identity for quirks (cg_identity, cg_layer_identify, cg_real_function).
 * 6: the wrapper makes the real call itself on the common paths, between cg_enter and cg_leave (no frame, no thunk);
 * cg_site gains `mode`, which the runtime computes and cg_enter reads; the layer's own cgl_sl_<name> (the short
 * paths) and cgl_gp_<name> (the frame and cg_call).
 * 7: cg_layer gains `real_prefix` (the real function's name is another); cg_domain_id, cg_domain_hold and
 * cg_domain_release.
 * 8: the wrapper makes a plain counted call itself (cg_my_slot, cg_slot, CG_MODE_COUNTED: cg_slot_inline,
 * cg_slot_enter, cg_slot_leave); the mode's values below are ABI.
 * 9: the wrapper counts a site's first state itself (cg_slot_state, CG_COUNTERS_TO_STATE, CG_CALLS_TO_STATES,
 * CG_CALLS_TO_CODE0); the layer's short path makes a blocking site's counted call itself, its threads inside counted
 * (cg_site gains `peaks`; cg_peak_in, cg_peak_out, CG_COUNTERS_TO_INSIDE); the slot's stall mark is on its first
 * line.
 * 10: cg_layer gains `search` (where the real library is looked for).
 * 11: wait_args: a blocking call's arguments in its slot (cg_wait_args, CG_SLOT_TO_WAIT).
 * 12: cg_site's first cache line holds all that a call through the wrapper reads (`direct`, `real`, `counted`,
 * `peaks`, the first state, the slot's place from the thread pointer), and sites are 64-byte aligned: a call touches
 * one line of its site (cg_site_slot; cg_slot_state takes the site).
 * 13: each site's arguments for the timeline (layer_args.h; `args`).
 * 14: the short path records them itself (layer_args.h, CG_ARGS_CALL).
 * 15: the slot holds the thread's run of plain counted calls of one site (last, from: cg_slot_enter). */
#define CG_LAYER_ABI 15

#define CG_EXPORT __attribute__((visibility("default")))
#define CG_LIKELY(x) __builtin_expect(!!(x), 1)

struct cg_counters;
struct cg_layer;

/* Calls the real function with the frame's arguments, stores the result in the frame, and returns 0 when the result
 * is the API's success (or the function returns no result code), else the result code itself as an int
 * (CG_RESULT_ZERO for a code of 0 where success is another value). Success is one compare; what a code means (a
 * failure, or a state such as ZE_RESULT_NOT_READY) the runtime decides off the success path. */
typedef int (*cg_thunk)(void *frame);
#define CG_RESULT_ZERO (-2147483647 - 1)

/* Thread rules (the policy keys writes, reads, destroys, sets, launches; docs/threads.md): how a call touches one
 * handle parameter. The handle is read from the wrapper's frame (struct cgl_fr_<name>) at `offset`, `size` bytes,
 * only when thread checks or per-handle locks are on. */
enum cg_rule_access {
    CG_RULE_READ = 1u << 0,    /* reads may overlap reads, never a write */
    CG_RULE_WRITE = 1u << 1,   /* must not overlap any other access to the handle */
    CG_RULE_DESTROY = 1u << 2, /* a write that ends the handle's life (set with CG_RULE_WRITE) */
    CG_RULE_SETS = 1u << 3,    /* sequence rule: sets state the same thread's next launch consumes */
    CG_RULE_LAUNCHES = 1u << 4 /* sequence rule: consumes what sets put on the handle */
};

typedef struct cg_rule {
    const char *param; /* the header's parameter name */
    uint16_t offset;   /* offsetof(struct cgl_fr_<name>, param) */
    uint8_t size;      /* sizeof the handle */
    uint8_t access;    /* enum cg_rule_access bits */
} cg_rule;

typedef struct cg_site {
    /* The first cache line: all that a call through the wrapper reads (the fast path, the plain counted call, a
     * blocking site's), filled in by the runtime and written only when the site's policy or the configuration
     * changes. Nothing a call writes shares it: a call with cold caches touches one line of its site
     * (docs/benchmarks.md, "Cold caches"). */
    _Alignas(64) _Atomic(void *) direct; /* real function when the site is idle, else NULL */
    _Atomic(void *) real;                /* the resolved real function (NULL until resolved) */
    /* the site's statistics record (ctr) when its mode is CG_MODE_COUNTED,
     * else NULL. Read by the wrapper's plain counted call (cg_site_counted). */
    struct cg_counters *_Atomic counted;
    /* the site's statistics record when its calls are counted as plain ones
     * plus its threads inside (a blocking site: its exact peak), else NULL.
     * Read by the layer's short path (cgl_sl_<name>, cg_site_peaks) before cg_enter. */
    struct cg_counters *_Atomic peaks;
    /* The state the wrapper counts itself (cg_slot_state): its record's
     * first state code as a thunk returns it (CG_RESULT_ZERO for 0), 0: none. */
    _Atomic int32_t state;
    /* cg_my_slot's place from the thread pointer (initial-exec TLS: the same in every thread), so that the wrapper
     * finds the thread's slot without the GOT's line (cg_site_slot). Set before `counted` and `peaks`. */
    int32_t slot_tp;
    /* which of cg_enter's paths the site takes (0: none, the wrapper goes
     * to cg_call). Read by cg_enter alone. */
    _Atomic uint32_t mode;
    uint32_t gid; /* filled in by the runtime: the site's process-wide number */
    /* The rest: read by the general path and the runtime. */
    const char *name; /* the header's spelling */
    struct cg_layer *layer;
    /* policy, changed at run time without a lock on the read side */
    _Atomic uint32_t transition; /* enum cg_transition */
    _Atomic uint32_t domain;     /* 0 = not serialized, else domain id + 1 */
    _Atomic uint32_t scope;      /* enum cg_scope */
    _Atomic uint32_t blocking;   /* 1 if the policy marks the site blocking */
    const char *reason;          /* why it is blocking (static or interned) */
    struct cg_counters *ctr;     /* this site's statistics record */
    uint32_t base;               /* index of the site whose policy/row this shares (itself if none) */
    uint32_t index;
    const cg_rule *rules; /* this entry point's thread rules (its own frame's offsets), or NULL */
    uint32_t nrules;
    _Atomic uint32_t uncounted; /* 1: its policy's `count = no`, filled in by the runtime: in padding */
    const struct cg_args *args; /* its default's (layer_args.h), filled in by the runtime: in padding */
} cg_site;

/* Default policy of one site, as the generator wrote it. */
typedef struct cg_site_default {
    const char *name;
    const char *base;   /* NULL, or the site whose policy and row a variant shares */
    uint8_t transition; /* enum cg_transition */
    uint8_t blocking;
    uint8_t scope; /* enum cg_scope */
    const char *reason;
    const char *serialize; /* NULL or a domain name */
    /* The result codes that report a state, not a failure (ZE_RESULT_NOT_READY from zeEventQueryStatus):
     * counted apart from errors. The policy's `states` ([api] for every site, a section for its own). */
    const int *states;
    unsigned nstates;     /* at most CG_MAX_STATES */
    const cg_rule *rules; /* thread rules, offsets into this site's own frame; NULL if none */
    uint32_t nrules;
    uint8_t collective;  /* 1: every rank of a job calls it alike (MPI's collectives): reports compare counts */
    uint8_t uncounted;   /* 1: `count = no`: with statistics on, its calls go uncounted (padding before: 0) */
    const cg_args *args; /* what a traced call records of its arguments (layer_args.h), or NULL */
} cg_site_default;

/* The most state codes one site may have (the policy reader refuses more). */
#define CG_MAX_STATES 4

/* cg_layer's `search` (also in callguard.h). */
#define CG_SEARCH_SYSTEM 0
#define CG_SEARCH_LD_LIBRARY_PATH 1

typedef struct cg_layer {
    int abi;                          /* CG_LAYER_ABI */
    const char *api;                  /* "cl", "ze", "cuda", "toy" */
    const char *prefixes;             /* comma-separated name prefixes: "ze,zet,zes" */
    const char *soname;               /* the vendor library's soname, or several, comma-separated, newest last */
    const char *library_env;          /* "CALLGUARD_CL_LIBRARY" */
    const char *library_path;         /* absolute path found at build time, or NULL */
    const char *header;               /* header the layer was generated from */
    long missing_result;              /* what every call returns when the real library is missing */
    const char *(*result_name)(long); /* names a result code; NULL if unknown */
    /* The code of a result name (any spelling the header has); 0 when it
     * has none. NULL when the API has no result type. */
    int (*result_code)(const char *name, long *code);
    unsigned nsites;
    cg_site *sites;
    const cg_site_default *defaults;
    /* wrappers[i]: the exported wrapper of sites[i] (hand-written where wrapper = hand) */
    void *const *wrappers;
    const char *const *passthrough; /* names forwarded without a guard (NULL-terminated), may be NULL */
    /* What a pass-through name runs when the real library is missing (it
     * returns missing_result); NULL when the layer has no pass-through names. */
    long (*passthrough_missing)(void);
    /* dlsym(RTLD_NEXT, name) made from inside the layer's own object, so
     * "next" means next after the layer, not after libcallguard. May be NULL. */
    void *(*dlsym_next)(const char *name);
    /* The real function of entry point NAME is named real_prefix + NAME (MPI's profiling interface: "P", so MPI_Send
     * calls PMPI_Send); NULL: NAME itself. Pass-through names are always their own. */
    const char *real_prefix;
    /* Where `callguard run` looks for the real library when the layer's variable names none: CG_SEARCH_SYSTEM (0) or
     * CG_SEARCH_LD_LIBRARY_PATH (callguard.h, cg_layer_search; the policy's [api] `search`). */
    int search;
    /* filled in by the runtime */
    void *priv;
    struct cg_layer *next;
    _Atomic int warned; /* the missing-library message was printed */
} cg_layer;

/* Called from the layer's constructor. Safe to call before main. */
void cg_layer_register(cg_layer *layer);

/* The slow path. Returns 0 when the thunk ran, -1 when the real function
 * could not be found (the wrapper then returns layer->missing_result). */
int cg_call(cg_site *site, const void *key, cg_thunk thunk, void *frame);

/* The common paths, with no frame and no thunk: the wrapper calls
 *
 *     uintptr_t tok = cg_enter(site);
 *     if (tok) {
 *         r = real(args...);
 *         if (r is success) cg_leave(tok); else cg_leave_code(tok, code of r);
 *         return r;
 *     }
 *     ... the frame and cg_call ...
 *
 * cg_enter returns 0 when the call needs the general path (cg_call): a
 * lock, thread rules, the site not resolved, the thread inside a guarded
 * call, a configuration the short paths do not cover. Otherwise it has
 * done the call's entry (counted it and marked the thread's slot, left the
 * CPython GIL, or both), and the wrapper must call the site's `real`
 * (non-NULL then) and then, on the same thread, cg_leave with the token
 * when the result is the API's success or the function returns no result
 * code, else cg_leave_code with the code a thunk would return (the code as
 * an int, CG_RESULT_ZERO for a code of 0 where success is another value):
 * success costs the runtime no test. Neither touches errno (CPython's re-entry keeps it): the
 * real call's errno reaches the caller. GCC calls both through the GOT
 * (noplt): one jump fewer each. */
#if defined(__GNUC__) && !defined(__clang__)
#define CG_NOPLT __attribute__((noplt))
#else
#define CG_NOPLT
#endif
CG_NOPLT uintptr_t cg_enter(cg_site *site);
CG_NOPLT void cg_leave(uintptr_t token);
CG_NOPLT void cg_leave_code(uintptr_t token, int code);

/* The plain counted call, made by the wrapper itself (ABI 8): what
 * cg_enter and cg_leave do for a site whose mode is CG_MODE_COUNTED, with
 * no call into libcallguard. The wrapper calls
 *
 *     struct cg_counters *c = cg_site_counted(site);
 *     cg_slot *s = cg_site_slot(site);
 *     if (c && cg_slot_free(s)) {
 *         cg_slot_enter(s, c);
 *         r = real(args...);
 *         if (r is success || cg_slot_state(site, s, code of r)) {
 *             if (cg_slot_leave(s)) return r;
 *             cg_leave((uintptr_t)s);
 *         } else {
 *             cg_leave_code((uintptr_t)s, code of r);
 *         }
 *         return r;
 *     }
 *     ... cg_enter, cg_leave as above ...
 *
 * cg_my_slot is the thread's in-flight slot (src/common/stats_file.h checks this view of it) when the thread has one
 * whose counts are its own, else a slot that always looks inside a call. Initial-exec and one pointer: libraries
 * dlopen'd by Python get initial-exec TLS from a small static pool. The slot's first line and its counts are written
 * by its thread alone: a plain add, no locked instruction. */
#define CG_MODE_COUNTED 1u /* a site's mode (filled in by the runtime): the plain counted call */
typedef struct cg_slot {
    struct cg_counters *counters; /* in a guarded call its site's record, else NULL: written by this thread alone */
    _Atomic uint64_t seq;         /* the thread's guarded calls: the number of the one in flight */
    _Atomic uint64_t mark;        /* the watchdog's stall mark; 0: none */
    /* The thread's run: its last plain counted call's record, whose calls numbered past `from` (cg_slot_enter). */
    struct cg_counters *_Atomic last;
    _Atomic uint64_t from;
    uint64_t cg_entered;
    uint32_t cg_shard_off, cg_owned;
    uint32_t calls_off; /* from a site's counters to this thread's count of its calls, in bytes */
    uint32_t cg_timed;
} cg_slot;
extern __thread cg_slot *cg_my_slot __attribute__((tls_model("initial-exec")));

/* x86-64 (but under ThreadSanitizer, which must see the accesses): one
 * instruction each where C's atomics take two or three. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_THREAD__)
#define CG_X86_ASM 1
#endif

/* +1 to a counter only this thread writes: seen whole by a reader on another
 * thread and by a signal handler on this one. */
static inline void cg_own_inc(_Atomic uint64_t *v)
{
#ifdef CG_X86_ASM
    __asm__ volatile("incq %0" : "+m"(*(uint64_t *)v));
#else
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + 1, memory_order_relaxed);
#endif
}

/* The site's record when its call is a plain counted one, else NULL.
 * Acquire: the site is resolved (`real`) for its mode. */
static inline struct cg_counters *cg_site_counted(cg_site *site)
{
    return atomic_load_explicit(&site->counted, memory_order_acquire);
}

/* The site's record when its call is a plain counted one with its threads
 * inside counted (a blocking site), else NULL. */
static inline struct cg_counters *cg_site_peaks(cg_site *site)
{
    return atomic_load_explicit(&site->peaks, memory_order_acquire);
}

/* The thread's slot (cg_my_slot), found from the site's line: on x86-64 (but under ThreadSanitizer) one load at the
 * thread pointer plus the site's slot_tp, where the initial-exec access would first load that offset from the
 * layer's GOT, a line of its own with cold caches. Volatile: the runtime changes the slot between two calls. */
static inline cg_slot *cg_site_slot(const cg_site *site)
{
#ifdef CG_X86_ASM
    cg_slot *s;
    __asm__ volatile("movq %%fs:(%1), %0" : "=r"(s) : "r"((intptr_t)site->slot_tp));
    return s;
#else
    (void)site;
    return cg_my_slot;
#endif
}
/* What the runtime puts in each site's slot_tp: where the initial-exec TLS variable `v` (cg_my_slot) of the calling
 * thread is, from its thread pointer. On every x86-64 build (ThreadSanitizer's too), so that a layer built otherwise
 * than the runtime still finds it. */
static inline int32_t cg_tp_offset(const void *v)
{
#if defined(__x86_64__) && defined(__GNUC__)
    char *tp;
    __asm__("movq %%fs:0, %0" : "=r"(tp));
    return (int32_t)((const char *)v - tp);
#else
    (void)v;
    return 0;
#endif
}

/* A site's threads inside its driver call now, and at most at once (two uint32_t), CG_COUNTERS_TO_INSIDE bytes
 * from its counters: a blocking site's calls add themselves on the way in and take themselves off on the way out,
 * so that the peak is exact (docs/report.md, "peak_inside"). */
#define CG_COUNTERS_TO_INSIDE 72
/* One arrival at a count pair now[0] (threads there now), now[1] (the most at once), and its departure: the
 * runtime counts its lock waits the same way. */
static inline void cg_peak_arrive(_Atomic uint32_t *now)
{
    uint32_t n = atomic_fetch_add_explicit(now, 1, memory_order_relaxed) + 1;
    uint32_t max = atomic_load_explicit(now + 1, memory_order_relaxed);
    while (n > max &&
           !atomic_compare_exchange_weak_explicit(now + 1, &max, n, memory_order_relaxed, memory_order_relaxed)) {}
}
static inline void cg_peak_depart(_Atomic uint32_t *now) { atomic_fetch_sub_explicit(now, 1, memory_order_relaxed); }
static inline void cg_peak_in(struct cg_counters *c)
{
    cg_peak_arrive((_Atomic uint32_t *)((char *)c + CG_COUNTERS_TO_INSIDE));
}
static inline void cg_peak_out(struct cg_counters *c)
{
    cg_peak_depart((_Atomic uint32_t *)((char *)c + CG_COUNTERS_TO_INSIDE));
}

/* Is the thread in no guarded call, with a slot and counts of its own? */
static inline int cg_slot_free(const cg_slot *s) { return s->counters == NULL; }

/* Ends the thread's run (cg_slot_enter) into its shard of the site, and begins c's with this call: the calls leave
 * the slot before they reach the shard (a process killed half-way loses them, never counts them twice). Inline, in
 * few registers: a call, or one register more, would cost the wrapper a larger frame on every path. */
static inline __attribute__((always_inline)) void cg_slot_run(cg_slot *s, struct cg_counters *c)
{
#ifdef CG_X86_ASM
    /* Two scratch registers that carry no argument: the wrapper's arguments stay where they are. */
    __asm__ volatile("movq %c[last](%[s]), %%r10\n\tmovq $0, %c[last](%[s])\n\ttestq %%r10, %%r10\n\tjz 1f\n\t"
                     "movl %c[off](%[s]), %%r11d\n\taddq %%r11, %%r10\n\tmovq %c[seq](%[s]), %%r11\n\t"
                     "subq %c[from](%[s]), %%r11\n\tdecq %%r11\n\taddq %%r11, (%%r10)\n"
                     "1:\tmovq %c[seq](%[s]), %%r11\n\tdecq %%r11\n\tmovq %%r11, %c[from](%[s])\n\t"
                     "movq %[c], %c[last](%[s])"
                     :
                     : [s] "r"(s), [c] "r"(c), [last] "i"(offsetof(cg_slot, last)), [from] "i"(offsetof(cg_slot, from)),
                       [seq] "i"(offsetof(cg_slot, seq)), [off] "i"(offsetof(cg_slot, calls_off))
                     : "r10", "r11", "cc", "memory");
#else
    struct cg_counters *last = atomic_load_explicit(&s->last, memory_order_relaxed);
    atomic_store_explicit(&s->last, NULL, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (last) { /* its calls: numbered past `from`, before this one */
        _Atomic uint64_t *calls = (_Atomic uint64_t *)((char *)last + s->calls_off);
        uint64_t n = atomic_load_explicit(&s->seq, memory_order_relaxed) - 1 -
                     atomic_load_explicit(&s->from, memory_order_relaxed);
        atomic_store_explicit(calls, atomic_load_explicit(calls, memory_order_relaxed) + n, memory_order_relaxed);
    }
    atomic_store_explicit(&s->from, atomic_load_explicit(&s->seq, memory_order_relaxed) - 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    atomic_store_explicit(&s->last, c, memory_order_relaxed);
#endif
}

/* Numbers the call, names its site in the slot (the in-flight record, and what makes a signal handler's guarded
 * call on this thread nested), then counts it: the number counts it while the thread calls one site again and
 * again (its run: the calls numbered past `from` are `last`'s, and no line of the record's is touched; every other
 * path that numbers a call moves `from` on with it), else cg_slot_run. */
static inline void cg_slot_enter(cg_slot *s, struct cg_counters *c)
{
    cg_own_inc(&s->seq);
    __atomic_store_n(&s->counters, c, __ATOMIC_RELEASE);
#ifdef CG_X86_ASM
    _Bool other;
    __asm__ volatile("cmpq %1, %2" : "=@ccne"(other) : "r"(c), "m"(*(struct cg_counters *const *)&s->last));
#else
    _Bool other = atomic_load_explicit(&s->last, memory_order_relaxed) != c;
#endif
    if (__builtin_expect(other, 0)) cg_slot_run(s, c);
}

/* After a call that succeeded: leaves the slot and returns 1, unless the
 * watchdog marked the call as long as a stall (0: cg_leave then records it). */
static inline int cg_slot_leave(cg_slot *s)
{
#ifdef CG_X86_ASM
    _Bool marked;
    __asm__ volatile("cmpq $0, %1" : "=@ccne"(marked) : "m"(*(const uint64_t *)&s->mark));
#else
    _Bool marked = atomic_load_explicit(&s->mark, memory_order_relaxed) != 0;
#endif
    if (__builtin_expect(marked, 0)) return 0;
    __atomic_store_n(&s->counters, NULL, __ATOMIC_RELEASE);
    return 1;
}

/* The one result other than success that the wrapper counts itself: the site's first state (a polling loop's
 * ZE_RESULT_NOT_READY), which the runtime names in the record's first code before any call returns it and keeps in
 * the site's `state` (its line: no line of the record's head is read). The thread's count of the site's states and
 * of that code sit CG_CALLS_TO_STATES and CG_CALLS_TO_CODE0 bytes from its count of the site's calls.
 * (src/common/stats_file.h checks both.) */
#define CG_CALLS_TO_STATES 24
#define CG_CALLS_TO_CODE0 32

/* Inside a plain counted call of `site` that returned `code` (not success): counts it in the thread's own counts and
 * returns 1 when it is the site's first state, else returns 0 (cg_leave_code then counts it). */
static inline int cg_slot_state(const cg_site *site, cg_slot *s, int code)
{
    char *c = (char *)s->counters;
#ifdef CG_X86_ASM
    _Bool other;
    __asm__ volatile("cmpl %2, %1" : "=@ccne"(other) : "r"(code), "m"(*(const int32_t *)&site->state));
    if (other) return 0;
    __asm__ volatile("incq %c2(%0,%1)\n\tincq %c3(%0,%1)"
                     :
                     : "r"(c), "r"((uintptr_t)s->calls_off), "i"(CG_CALLS_TO_CODE0), "i"(CG_CALLS_TO_STATES)
                     : "memory");
#else
    if (code != atomic_load_explicit(&site->state, memory_order_relaxed)) return 0;
    char *calls = c + s->calls_off;
    cg_own_inc((_Atomic uint64_t *)(calls + CG_CALLS_TO_CODE0));
    cg_own_inc((_Atomic uint64_t *)(calls + CG_CALLS_TO_STATES));
#endif
    return 1;
}

/* The arguments a blocking call waits on (the policy key wait_args, ABI 11; docs/report.md, "What a call waits
 * for"). A site's table, made by the generator, names them as the header does and says how each is shown; on the
 * blocking path only (cgl_sl_NAME, before every path that makes the call), the wrapper stores their values in the
 * slot of a thread in no call, with the number its call will get: a few stores, nothing on the other paths. The
 * watchdog shows them with the call on the hang page while the number is the call's. A thread's first guarded call
 * (no slot of its own yet) and a nested one keep none. */
#define CG_WAIT_ARGS_MAX 4
/* How a value is shown when the layer has no word of its own for it: by its C type. */
enum { CG_WAIT_INT = 1, CG_WAIT_UINT = 2, CG_WAIT_HEX = 3 };
typedef struct cg_wait_arg {
    const char *name; /* the parameter's name in the header */
    const char *as;   /* the policy's word after the name (`comm:mpi_comm`) for the layer's format, or NULL */
    uint32_t base;    /* CG_WAIT_*: how it is shown otherwise */
} cg_wait_arg;
/* The layer's own text for a value whose argument has a word (`as`): writes at most `size` bytes to out and returns
 * 1, or returns 0 (then it is shown by its base). Runs on the watchdog thread: it may read memory, never call the
 * API or take a lock. */
typedef int (*cg_wait_format)(const char *as, uint64_t value, char *out, size_t size);
typedef struct cg_wait_args {
    cg_site *site; /* whose calls these are: the values are shown only with a call counted in its record */
    cg_wait_format format;
    uint32_t n;
    cg_wait_arg arg[CG_WAIT_ARGS_MAX];
} cg_wait_args;
/* The slot's third cache line, CG_SLOT_TO_WAIT bytes from its start (src/common/stats_file.h checks it): `seq` is
 * the number of the call the values are of, stored first; the watchdog reads them as a seqlock's reader. */
#define CG_SLOT_TO_WAIT 128
typedef struct cg_slot_wait {
    _Atomic uint64_t seq;
    const cg_wait_args *_Atomic of;
    _Atomic uint64_t v[CG_WAIT_ARGS_MAX];
} cg_slot_wait;
static inline void cg_wait_note(cg_slot *s, const cg_wait_args *of, const uint64_t *v, unsigned n)
{
    cg_slot_wait *w = (cg_slot_wait *)((char *)s + CG_SLOT_TO_WAIT);
    atomic_store_explicit(&w->seq, atomic_load_explicit(&s->seq, memory_order_relaxed) + 1, memory_order_relaxed);
    /* Release: the number is seen before any value (a plain store on x86). */
    atomic_store_explicit(&w->of, of, memory_order_release);
    for (unsigned i = 0; i < n; i++)
        atomic_store_explicit(&w->v[i], v[i], memory_order_release);
}
/* In cgl_sl_NAME of a site with wait_args: the values as uint64_t, in the
 * order of the layer's table cgl_wa_NAME. */
#define CG_WAIT_ARGS(name, ...)                                                                                        \
    do {                                                                                                               \
        cg_slot *cgl_ws = cg_my_slot;                                                                                  \
        if (CG_LIKELY(cg_slot_free(cgl_ws))) {                                                                         \
            const uint64_t cgl_wv[] = {__VA_ARGS__};                                                                   \
            cg_wait_note(cgl_ws, &cgl_wa_##name, cgl_wv, sizeof cgl_wv / sizeof cgl_wv[0]);                            \
        }                                                                                                              \
    } while (0)

/* A generated wrapper's paths, written out once here: the generator writes
 * one line per path, and each expands in place to the code the generator
 * used to spell out in every wrapper, so the wrapper compiles to the same
 * instructions. They use the layer's own names (cgl_sites[CGL_<name>],
 * struct cgl_fr_<name>): only a layer's C file, and the hand-written file it
 * includes, can use them.
 *
 *   NAME  the entry point: its site, and its prototype (the real function is
 *         called as NAME's type);
 *   ARGS  the arguments in parentheses: `(queue, event)`, `()`;
 *   CODE  what makes a result the code a thunk returns: the layer's
 *         cgl_thunk_code, or CG_NO_CODE for a function with no result code;
 *   LEFT  a cold function of the return type (CG_LEFT_FUNCTION) that leaves
 *         a counted call the wrapper could not finish itself: a tail call, so
 *         that the wrapper keeps no result across a call of its own.
 *
 * A path that takes the call returns from the function it is written in;
 * otherwise it falls through to the next. Each has a _VOID form for a
 * function that returns void. The wrapper:
 *
 *     CG_COUNTED_CALL(NAME, ARGS, CODE, LEFT);   the plain counted call
 *     CG_DIRECT_CALL(NAME, ARGS);                the fast path
 *     return cgl_sl_NAME(args...);               the rest, out of line
 *
 * and cgl_sl_NAME: CG_BLOCKING_CALL (only where the policy marks the site
 * blocking), CG_SHORT_CALL, then `return cgl_gp_NAME(args...)`, which packs
 * the frame for cg_call and the thunk CG_THUNK defines. */

/* The site's real function, typed as the entry point NAME. On x86-64 a plain load, which GCC folds into the indirect
 * call (an atomic load it keeps apart: one instruction more on every path). Every path reads it after an acquire
 * that follows its resolution (`counted`, `peaks`, `mode`), and a racing first call stores the same function again. */
#ifdef CG_X86_ASM
#define CG_SITE_REAL(site, name) ((__typeof__(name) *)*(void *const *)&(site)->real)
#else
#define CG_SITE_REAL(site, name) ((__typeof__(name) *)atomic_load_explicit(&(site)->real, memory_order_relaxed))
#endif
/* The CODE of a function that returns no result code: always success. */
#define CG_NO_CODE(ret) 0

/* The plain counted call (cg_site_counted, above) in the wrapper; in the short path, a blocking site's, with its
 * threads inside counted around the real call (cg_site_peaks, cg_peak_in). A marked call, or a result other than
 * success and the site's first state, leaves through LEFT. */
#define CG_COUNTED_CALL(name, args, code, left)                                                                        \
    CG_COUNTED_PATH_(cg_site_counted, 0, &cgl_sites[CGL_##name], name, args, code, left)
#define CG_BLOCKING_CALL(name, args, code, left)                                                                       \
    CG_COUNTED_PATH_(cg_site_peaks, 1, &cgl_sites[CGL_##name], name, args, code, left)
#define CG_COUNTED_CALL_VOID(name, args) CG_COUNTED_PATH_VOID_(cg_site_counted, 0, &cgl_sites[CGL_##name], name, args)
#define CG_BLOCKING_CALL_VOID(name, args) CG_COUNTED_PATH_VOID_(cg_site_peaks, 1, &cgl_sites[CGL_##name], name, args)
#define CG_COUNTED_PATH_(getter, peaks, site, name, args, code, left)                                                  \
    do {                                                                                                               \
        struct cg_counters *cgl_c = getter(site);                                                                      \
        if (CG_LIKELY(cgl_c != NULL)) {                                                                                \
            cg_slot *cgl_s = cg_site_slot(site);                                                                       \
            if (CG_LIKELY(cg_slot_free(cgl_s))) {                                                                      \
                cg_slot_enter(cgl_s, cgl_c);                                                                           \
                if (peaks) cg_peak_in(cgl_c);                                                                          \
                __auto_type cgl_ret = CG_SITE_REAL(site, name) args;                                                   \
                if (peaks) cg_peak_out(cgl_c);                                                                         \
                int cgl_code = code(cgl_ret);                                                                          \
                if (CG_LIKELY(cgl_code == 0) || cg_slot_state(site, cgl_s, cgl_code)) {                                \
                    if (CG_LIKELY(cg_slot_leave(cgl_s))) return cgl_ret;                                               \
                    cgl_code = 0; /* counted: cg_leave records the stall */                                            \
                }                                                                                                      \
                return left(cgl_s, cgl_code, cgl_ret);                                                                 \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)
#define CG_COUNTED_PATH_VOID_(getter, peaks, site, name, args)                                                         \
    do {                                                                                                               \
        struct cg_counters *cgl_c = getter(site);                                                                      \
        if (CG_LIKELY(cgl_c != NULL)) {                                                                                \
            cg_slot *cgl_s = cg_site_slot(site);                                                                       \
            if (CG_LIKELY(cg_slot_free(cgl_s))) {                                                                      \
                cg_slot_enter(cgl_s, cgl_c);                                                                           \
                if (peaks) cg_peak_in(cgl_c);                                                                          \
                CG_SITE_REAL(site, name) args;                                                                         \
                if (peaks) cg_peak_out(cgl_c);                                                                         \
                if (!cg_slot_leave(cgl_s)) cg_leave((uintptr_t)cgl_s);                                                 \
                return;                                                                                                \
            }                                                                                                          \
        }                                                                                                              \
    } while (0)

/* The fast path: one load of `direct`, a test and a tail jump. */
#define CG_DIRECT_CALL(name, args)                                                                                     \
    do {                                                                                                               \
        __typeof__(name) *cgl_fn =                                                                                     \
            (__typeof__(name) *)atomic_load_explicit(&cgl_sites[CGL_##name].direct, memory_order_relaxed);             \
        if (CG_LIKELY(cgl_fn != NULL)) return cgl_fn args;                                                             \
    } while (0)
#define CG_DIRECT_CALL_VOID(name, args)                                                                                \
    do {                                                                                                               \
        __typeof__(name) *cgl_fn =                                                                                     \
            (__typeof__(name) *)atomic_load_explicit(&cgl_sites[CGL_##name].direct, memory_order_relaxed);             \
        if (CG_LIKELY(cgl_fn != NULL)) {                                                                               \
            cgl_fn args;                                                                                               \
            return;                                                                                                    \
        }                                                                                                              \
    } while (0)

/* The short paths: the real call between cg_enter and cg_leave (above). */
#define CG_SHORT_CALL(name, args, code) CG_SHORT_PATH_(&cgl_sites[CGL_##name], name, args, code)
#define CG_SHORT_PATH_(site, name, args, code)                                                                         \
    do {                                                                                                               \
        uintptr_t cgl_tok = cg_enter(site);                                                                            \
        if (CG_LIKELY(cgl_tok != 0)) {                                                                                 \
            __auto_type cgl_ret = CG_SITE_REAL(site, name) args;                                                       \
            int cgl_code = code(cgl_ret);                                                                              \
            if (CG_LIKELY(cgl_code == 0))                                                                              \
                cg_leave(cgl_tok);                                                                                     \
            else                                                                                                       \
                cg_leave_code(cgl_tok, cgl_code);                                                                      \
            return cgl_ret;                                                                                            \
        }                                                                                                              \
    } while (0)
#define CG_SHORT_CALL_VOID(name, args) CG_SHORT_PATH_VOID_(&cgl_sites[CGL_##name], name, args)
#define CG_SHORT_PATH_VOID_(site, name, args)                                                                          \
    do {                                                                                                               \
        uintptr_t cgl_tok = cg_enter(site);                                                                            \
        if (CG_LIKELY(cgl_tok != 0)) {                                                                                 \
            CG_SITE_REAL(site, name) args;                                                                             \
            cg_leave(cgl_tok);                                                                                         \
            return;                                                                                                    \
        }                                                                                                              \
    } while (0)

/* Defines NAME's thunk, static int cgl_th_NAME(void *), for cg_call: the real call with the frame's arguments (ARGS
 * names the frame cgl_f: `(cgl_f->queue, cgl_f->event)`), its result stored in the frame, and the result's code
 * returned. Ends in its own prototype, so that a use ends with a semicolon as a declaration does. */
#define CG_THUNK(name, args, code)                                                                                     \
    static int cgl_th_##name(void *cgl_frame)                                                                          \
    {                                                                                                                  \
        struct cgl_fr_##name *cgl_f = cgl_frame;                                                                       \
        cgl_f->cgl_ret = CG_SITE_REAL(&cgl_sites[CGL_##name], name) args;                                              \
        return code(cgl_f->cgl_ret);                                                                                   \
    }                                                                                                                  \
    static int cgl_th_##name(void *cgl_frame)
#define CG_THUNK_VOID(name, args)                                                                                      \
    static int cgl_th_##name(void *cgl_frame)                                                                          \
    {                                                                                                                  \
        struct cgl_fr_##name *cgl_f = cgl_frame;                                                                       \
        (void)cgl_f;                                                                                                   \
        CG_SITE_REAL(&cgl_sites[CGL_##name], name) args;                                                               \
        return 0;                                                                                                      \
    }                                                                                                                  \
    static int cgl_th_##name(void *cgl_frame)

/* Defines FNAME, the cold end of a counted call that returns TYPE: cg_leave (the call was marked) or cg_leave_code,
 * then the result. A layer has one, cgl_left, that every wrapper returning its result type shares, and one
 * (cgl_left_<name>) per wrapper that returns another type. Ends in its own prototype, as CG_THUNK does. */
#define CG_LEFT_FUNCTION(fname, type)                                                                                  \
    static __attribute__((noinline, cold, unused)) type fname(cg_slot *cgl_s, int cgl_code, type cgl_ret)              \
    {                                                                                                                  \
        if (cgl_code == 0)                                                                                             \
            cg_leave((uintptr_t)cgl_s);                                                                                \
        else                                                                                                           \
            cg_leave_code((uintptr_t)cgl_s, cgl_code);                                                                 \
        return cgl_ret;                                                                                                \
    }                                                                                                                  \
    static type fname(cg_slot *cgl_s, int cgl_code, type cgl_ret)

/* Resolves the real function of a pass-through name (never NULL: the
 * layer's passthrough_missing is returned instead). */
void *cg_resolve_passthrough(cg_layer *layer, const char *name);

/* The layer's wrapper of the entry point `name` (a variant's own wrapper
 * for a variant), or NULL when the layer has no such site. */
void *cg_wrapper_by_name(const cg_layer *layer, const char *name);

/* For a hand-written resolver (cuGetProcAddress): maps `real`, a function the real library handed out, to the export
 * it is (dladdr: the exported symbol starting exactly there), then to the layer's wrapper of that name. Returns
 * `real` unchanged when it is no export start or its name is no site of the layer (a pass-through name, a name no
 * header had), and NULL for NULL. */
void *cg_wrapper_by_address(const cg_layer *layer, void *real);

/* A report row of its own for one instance of a site's calls, beside the site's row: NCCL's collectives on one
 * communicator (docs/nccl.md). The row is named "NAME@TAG" (NAME the site's, or its base's for a variant), in the
 * site's API, with the site's policy (a collective's row is compared across the ranks that have it); made on first
 * use, under a lock: a hand-written wrapper asks once per instance and keeps the answer. NULL when the name would be
 * longer than a row's name or the process's rows ran out: such calls are counted only in the site's row.
 * cg_row_count adds one call (and one error when failed) to such a row while statistics are on; NULL is ignored. */
struct cg_counters *cg_site_row(cg_site *site, const char *tag);
void cg_row_count(struct cg_counters *row, int failed);

/* cg_row_count for a call of `site` just made: a success of a site the wrapper counts itself
 * (cg_site_counted) is added to the thread's own count of the row with a plain add, as the wrapper adds
 * its site's; anything else goes through cg_row_count. For APIs whose calls are not async-signal-safe
 * (NCCL's): no handler on this thread can be counting in the row between the add's load and store. */
static inline void cg_row_count_own(cg_site *site, struct cg_counters *row, int failed)
{
    cg_slot *s = cg_site_slot(site);
    if (cg_site_counted(site) && cg_slot_free(s) && !failed)
        cg_own_inc((_Atomic uint64_t *)((char *)row + s->calls_off));
    else
        cg_row_count(row, failed);
}

/* Driver identity (docs/quirks.md). The quirks file keys known driver bugs on what an API says about its driver;
 * only the layer knows how to ask, so a layer that has quirks to match carries a hand-written probe, and its
 * hand-written wrappers of the calls that initialize the API (zeInit, clGetPlatformIDs) call cg_layer_identify after
 * the call succeeded. The runtime runs the probe once per API and process, and only when the quirks file has a quirk
 * for that API; it then switches on the fix of each quirk that matches, before the initializing call returns. */
typedef struct cg_identity {
    uint32_t vendor;  /* PCI vendor id (0x8086), 0 when the API gives none */
    char name[128];   /* the driver's name as the API gives it, "" when it gives none */
    char version[64]; /* the driver's version as the API gives it ("26.27.39122.11") */
} cg_identity;

/* Fills ids[0 .. max) with the drivers (platforms) the API has now and returns how many it filled. It calls the real
 * functions (cg_real_function), never the layer's wrappers, and must not fail in a way the program could see. */
typedef unsigned (*cg_probe)(cg_layer *layer, cg_identity *ids, unsigned max);

/* Called by a hand-written wrapper after the API initialized: runs `probe` the first time for this API when quirks
 * apply to it; returns at once otherwise. Another thread calling it meanwhile waits for the probe. */
void cg_layer_identify(cg_layer *layer, cg_probe probe);

/* The real function of one of the layer's sites or pass-through names,
 * resolved now if it was not; NULL when the real library has none. */
void *cg_real_function(cg_layer *layer, const char *name);

/* 1 when a loaded object defines the function `name`, other than callguard's objects and the one holding the address
 * `self`. For the IFUNC resolvers of the functions only an API's other ABIs declare (docs/configuration.md, "Other
 * ABIs"): the dynamic linker asks them while it relocates an object, maybe before any constructor ran, so this only
 * reads the loaded objects' dynamic symbol tables (dl_iterate_phdr): no dlopen, no malloc. */
int cg_loaded_defines(const char *name, const void *self);

/* A domain's lock held by hand, for a hand-written wrapper whose one guarded call makes several real calls and lets
 * the domain's other calls run in between (MPI's blocking calls completed by tests, docs/mpi.md). cg_domain_id gives
 * the process-scoped domain `name`, created on first use (the lock that sites serialized into `name` take), or 0
 * when the name is refused or the domains ran out (cg_last_error says why). */
uint32_t cg_domain_id(const char *name);
void cg_domain_hold(uint32_t id);
void cg_domain_release(uint32_t id);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
