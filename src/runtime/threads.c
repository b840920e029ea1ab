/* Thread rules: the specs' per-handle rules (policy keys writes, reads,
 * destroys, sets, launches; layer.h's cg_rule) checked around each call,
 * or turned into per-handle locks, and the holds of cg_handle_hold.
 *
 * The checker follows Vulkan's thread-safety layer: each handle has a
 * count of writers and readers inside calls right now. A call that enters
 * as a writer and finds anyone inside, or as a reader and finds a writer,
 * is a violation of the rule; the one inside is named from what it left in
 * the entry as it entered. Only the later of the two finds the overlap, so
 * one overlap counts once. A handle's entry lives as long as the process:
 * a value reused after a destroy finds a count of zero, and destroys
 * forgets its sequence state, so reuse is never a violation.
 *
 * The sequence rule (oneAPI.jl's case: set arguments, then launch) keeps,
 * per handle, which threads have set state since their last launch. A set
 * by another thread marks each of them intruded upon; a launch by an
 * intruded thread is the violation. A launch by a thread with nothing
 * pending consumes everyone's sets (a kernel handed to another thread to
 * launch), and a launch without new sets is no violation (arguments kept
 * across launches).
 *
 * Locks: one reader/writer lock per handle value (hlock.c), taken after
 * the runtime is left (the caller's cgi_inner runs outside it), all of a
 * call's or none: a call never waits for one while holding another, so two
 * calls never deadlock on each other's locks, and a call that waits in the
 * driver holds up only calls on its own handles. A hold (cg_handle_hold)
 * keeps its handle's lock exclusive across calls; the holder's own calls
 * skip the handles it holds, and the checker counts the hold as a writer
 * of the handle. */
#define _GNU_SOURCE
#include "threads.h"

#include "clock.h"
#include "../common/errors.h"
#include "../common/names.h"
#include "hlock.h"
#include "config.h" /* cgi_cfg: the adapter a hold leaves the runtime through */
#include "stats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- who: a thread inside a site, in one word ------------------------------------
 * tid << 32 | rule index << 28 | site number (layer << 20 | index). */

#define CGI_THR_MAX_LAYERS 255
#define CGI_HOLD_GID 0x0fffffffu    /* the other side is a hold */
#define CGI_UNKNOWN_GID 0x0ffffffeu /* the other side could not be told */
/* Written once per layer as it registers (before any of its calls), read when a violation names a site. */
static cg_layer *_Atomic cgi_thr_layers[CGI_THR_MAX_LAYERS];
static unsigned cgi_thr_nlayers;

static __thread int32_t cgi_thr_tid __attribute__((tls_model("initial-exec")));

static inline int32_t cgi_thr_me(void)
{
    if (__builtin_expect(!cgi_thr_tid, 0)) cgi_thr_tid = (int32_t)syscall(SYS_gettid);
    return cgi_thr_tid;
}

static inline uint64_t cgi_who(int32_t tid, uint32_t gid, unsigned rule)
{
    return (uint64_t)(uint32_t)tid << 32 | (uint64_t)(rule & 15) << 28 | (gid & 0x0fffffffu);
}

static const cg_site *cgi_who_site(uint64_t who)
{
    uint32_t gid = (uint32_t)who & 0x0fffffffu, l = gid >> 20, i = gid & 0xfffffu;
    cg_layer *layer = l < CGI_THR_MAX_LAYERS ? atomic_load_explicit(&cgi_thr_layers[l], memory_order_acquire) : NULL;
    if (gid == CGI_HOLD_GID || !layer || i >= layer->nsites) return NULL;
    return &layer->sites[i];
}

void cgi_thr_layer_registered(cg_layer *l)
{
    unsigned id = cgi_thr_nlayers < CGI_THR_MAX_LAYERS ? cgi_thr_nlayers++ : CGI_THR_MAX_LAYERS;
    for (unsigned i = 0; i < l->nsites; i++) {
        cg_site *s = &l->sites[i];
        s->rules = l->defaults[i].rules;
        s->nrules = l->defaults[i].nrules;
        /* A layer past the limit, or a site past 2^20: its rules cannot be named, so they are not used. */
        if (id >= CGI_THR_MAX_LAYERS || i > 0xfffffu) s->nrules = 0;
        s->gid = id << 20 | i;
    }
    if (id < CGI_THR_MAX_LAYERS) atomic_store_explicit(&cgi_thr_layers[id], l, memory_order_release);
}

/* ---- configuration ------------------------------------------------------------- */

static _Atomic int cgi_thr_check, cgi_thr_serialize;
static _Atomic uint64_t cgi_thr_hold_ns;

uint32_t cgi_thr_site_flags(const cg_site *s)
{
    if (!s->nrules) return 0;
    uint32_t f = 0;
    if (atomic_load_explicit(&cgi_thr_check, memory_order_relaxed)) f |= CGI_DOM_CHECK;
    if (atomic_load_explicit(&cgi_thr_serialize, memory_order_relaxed))
        for (uint32_t r = 0; r < s->nrules; r++)
            if (s->rules[r].access & (CG_RULE_READ | CG_RULE_WRITE)) f |= CGI_DOM_HLOCK;
    return f;
}

/* ---- the checker's table: one entry per handle value seen ---------------------------- */

#define CGI_THR_TABLE_BITS 16
#define CGI_THR_PROBES 64
#define CGI_THR_PENDING 3
#define CGI_W1 (1ull << 32)

typedef struct cgi_pending {
    uint64_t who;      /* a thread that set state since its last launch (its sets) */
    uint64_t intruder; /* another thread's set since then, 0 if none */
} cgi_pending;

typedef struct cgi_hobj {
    _Atomic uintptr_t key;
    _Atomic uint64_t count;     /* writers << 32 | readers, inside calls now */
    _Atomic uint64_t inside[2]; /* who is inside (0: free), for naming the other side */
    _Atomic uint64_t seq;       /* the sequence rule: 0, one pending thread's who, or CGI_SEQ_LIST */
    _Atomic uint32_t lock;      /* the list's spin lock */
    uint32_t npend;
    cgi_pending pend[CGI_THR_PENDING];
} cgi_hobj;

static cgi_hobj *cgi_thr_table;

static inline uint64_t cgi_mix(uintptr_t key)
{
    uint64_t h = (uint64_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h;
}

/* The entry of a handle, made on first sight; NULL when its probe run is full. */
static cgi_hobj *cgi_thr_entry(uintptr_t key)
{
    const uint64_t mask = (1u << CGI_THR_TABLE_BITS) - 1;
    uint64_t h = cgi_mix(key);
    for (unsigned i = 0; i < CGI_THR_PROBES; i++) {
        cgi_hobj *e = &cgi_thr_table[(h + i) & mask];
        uintptr_t k = atomic_load_explicit(&e->key, memory_order_acquire);
        if (k == key) return e;
        if (k == 0) {
            if (atomic_compare_exchange_strong_explicit(&e->key, &k, key, memory_order_acq_rel, memory_order_acquire) ||
                k == key)
                return e;
        }
    }
    atomic_fetch_add_explicit(&cgi_stats->h.handles_untracked, 1, memory_order_relaxed);
    return NULL;
}

/* The word naming a call inside: the one it entered as (0 when the handle
 * was free, else 1). Plain stores: naming costs no atomic update, and with
 * more than two threads inside at once a name can be a recent one's. */
static inline void cgi_slot_take(cgi_hobj *e, uint64_t me, uint64_t prev)
{
    atomic_store_explicit(&e->inside[prev != 0], me, memory_order_relaxed);
}

/* Another thread inside, or "unknown" when it has not taken its slot yet or found none. */
static uint64_t cgi_slot_other(cgi_hobj *e, int32_t tid)
{
    for (int i = 0; i < 2; i++) {
        uint64_t w = atomic_load_explicit(&e->inside[i], memory_order_relaxed);
        if (w && (uint32_t)(w >> 32) != (uint32_t)tid) return w;
    }
    return cgi_who(0, CGI_UNKNOWN_GID, 0);
}

static inline uintptr_t cgi_rule_handle(const cg_rule *r, const void *args)
{
    uintptr_t h = 0;
    const char *p = (const char *)args + r->offset;
    /* A pointer-sized handle (every opaque handle type) with a constant-size copy. */
    if (__builtin_expect(r->size == sizeof h, 1))
        memcpy(&h, p, sizeof h);
    else
        memcpy(&h, p, r->size < sizeof h ? r->size : sizeof h);
    return h;
}

/* ---- holds: this thread's, for its own calls ------------------------------------------ */

#define CGI_THR_MAX_HOLDS 16

typedef struct cgi_holds {
    unsigned n;
    struct {
        uintptr_t handle;
        cgi_hl *lock;
        unsigned depth;
    } h[CGI_THR_MAX_HOLDS];
} cgi_holds;

/* One pointer of TLS; the list itself is allocated on the first hold and
 * freed when its thread exits (the key's destructor). */
static __thread cgi_holds *cgi_my_holds __attribute__((tls_model("initial-exec")));
static pthread_key_t cgi_holds_key;

static void cgi_holds_free(void *p)
{
    /* A thread that exits holding handles leaves their locks held, as a
     * thread exiting with a mutex held does: a bug of the program. */
    free(p);
    cgi_my_holds = NULL;
}

static inline int cgi_holds_handle(uintptr_t handle)
{
    const cgi_holds *hs = cgi_my_holds;
    if (__builtin_expect(hs == NULL, 1)) return 0;
    for (unsigned i = 0; i < hs->n; i++)
        if (hs->h[i].handle == handle) return 1;
    return 0;
}

/* ---- violations: into the statistics region, so a dying process keeps them ---------- */

typedef struct cgi_vkey {
    uint32_t kind;
    uint32_t gid, other_gid;
    uint8_t rule, other_rule;
} cgi_vkey;

static cgi_vkey cgi_vkeys[CGI_STATS_MAX_VIOLATIONS];
static unsigned cgi_nviol;
static pthread_mutex_t cgi_viol_lock = PTHREAD_MUTEX_INITIALIZER;

/* Names one side: its api, entry point, parameter and access. A hold has
 * no entry point: "cg_handle_hold". */
static void cgi_side(uint64_t who, unsigned want, char *api, char *name, char *param, char *access)
{
    const cg_site *s = cgi_who_site(who);
    unsigned r = (unsigned)(who >> 28) & 15;
    if (!s) {
        snprintf(api, CGI_API_NAME_MAX, "%s", "callguard");
        int hold = ((uint32_t)who & 0x0fffffffu) == CGI_HOLD_GID;
        snprintf(name, CGI_NAME_MAX, "%s", hold ? "cg_handle_hold" : "?");
        snprintf(param, 32, "%s", hold ? "handle" : "?");
        snprintf(access, 16, "%s", hold ? "holds" : "?");
        return;
    }
    snprintf(api, CGI_API_NAME_MAX, "%s", s->layer->api);
    snprintf(name, CGI_NAME_MAX, "%s", s->name);
    const cg_rule *rule = r < s->nrules ? &s->rules[r] : NULL;
    snprintf(param, 32, "%s", rule ? rule->param : "?");
    snprintf(access, 16, "%s",
             rule ? cgi_rule_access_word(rule->access & want ? rule->access & want : rule->access) : "?");
    if (rule && (rule->access & CG_RULE_DESTROY) && (want & CG_RULE_WRITE))
        snprintf(access, 16, "%s", cgi_rule_keys[CGI_RULE_DESTROYS]);
}

/* want_*: the bits the side is named by (an overlap names writes or reads,
 * a sequence sets or launches). set_who: a sequence's own earlier set. */
static void cgi_record_violation(uint32_t kind, uintptr_t handle, uint64_t who, unsigned want, uint64_t other,
                                 unsigned other_want, uint64_t set_who)
{
    cgi_vkey k = {kind, (uint32_t)who & 0x0fffffffu, (uint32_t)other & 0x0fffffffu, (uint8_t)((who >> 28) & 15),
                  (uint8_t)((other >> 28) & 15)};
    pthread_mutex_lock(&cgi_viol_lock);
    unsigned i = 0;
    while (i < cgi_nviol && memcmp(&cgi_vkeys[i], &k, sizeof k) != 0)
        i++;
    if (i < cgi_nviol) {
        atomic_fetch_add_explicit(&cgi_stats->violation[i].count, 1, memory_order_relaxed);
    } else if (i == CGI_STATS_MAX_VIOLATIONS) {
        atomic_fetch_add_explicit(&cgi_stats->h.violations_dropped, 1, memory_order_relaxed);
    } else {
        cgi_vkeys[i] = k;
        cgi_nviol++;
        cgi_violation *v = &cgi_stats->violation[i];
        v->kind = kind;
        v->handle = (uint64_t)handle;
        v->at_ns = cgi_now_ns();
        v->tid = (int32_t)(who >> 32);
        v->other_tid = (int32_t)(other >> 32);
        cgi_side(who, want, v->api, v->name, v->param, v->access);
        cgi_side(other, other_want, v->other_api, v->other, v->other_param, v->other_access);
        v->set_name[0] = '\0';
        if (set_who) {
            const cg_site *s = cgi_who_site(set_who);
            snprintf(v->set_name, sizeof v->set_name, "%s", s ? s->name : "?");
        }
        atomic_store_explicit(&v->count, 1, memory_order_relaxed);
        atomic_store_explicit(&v->valid, 1, memory_order_release);
    }
    pthread_mutex_unlock(&cgi_viol_lock);
}

/* ---- the sequence rule ----------------------------------------------------------
 * The common case costs at most one atomic update: a thread sets a kernel's
 * arguments and launches it, alone. `seq` is 0 (nothing pending) or the
 * `who` of the one thread with settings pending and nobody else's since:
 * its further settings change nothing, its launch empties it (one CAS). A
 * second thread's setting while one is pending moves the handle to the
 * list under its spin lock (CGI_SEQ_LIST) until the list empties. */

#define CGI_SEQ_LIST (~0ull)

static inline uint32_t cgi_tid_of(uint64_t who) { return (uint32_t)(who >> 32); }

static inline void cgi_seq_lock(cgi_hobj *e)
{
    while (atomic_exchange_explicit(&e->lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&e->lock, memory_order_relaxed))
            __builtin_ia32_pause();
}

static inline void cgi_seq_unlock(cgi_hobj *e) { atomic_store_explicit(&e->lock, 0, memory_order_release); }

/* Under the lock: the list's state back in `seq` where it fits one word. */
static void cgi_seq_settle(cgi_hobj *e)
{
    uint64_t w = CGI_SEQ_LIST;
    if (e->npend == 0)
        w = 0;
    else if (e->npend == 1 && !e->pend[0].intruder)
        w = e->pend[0].who, e->npend = 0;
    atomic_store_explicit(&e->seq, w, memory_order_release);
}

/* Under the lock: a single pending thread's word becomes the list's first entry. */
static void cgi_seq_to_list(cgi_hobj *e, uint64_t w)
{
    if (w != CGI_SEQ_LIST) {
        e->npend = 0;
        if (w) e->pend[e->npend++] = (cgi_pending){w, 0};
    }
}

static void cgi_seq_sets(cgi_hobj *e, uint64_t me)
{
    uint32_t tid = cgi_tid_of(me);
    uint64_t w = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (w != CGI_SEQ_LIST && w && cgi_tid_of(w) == tid) return; /* mine already */
    if (!w && atomic_compare_exchange_strong_explicit(&e->seq, &w, me, memory_order_acq_rel, memory_order_acquire))
        return;
    cgi_seq_lock(e);
    w = atomic_load_explicit(&e->seq, memory_order_acquire);
    cgi_seq_to_list(e, w);
    int mine = 0;
    for (uint32_t i = 0; i < e->npend; i++) {
        if (cgi_tid_of(e->pend[i].who) == tid)
            mine = 1;
        else if (!e->pend[i].intruder)
            e->pend[i].intruder = me;
    }
    if (!mine && e->npend < CGI_THR_PENDING) e->pend[e->npend++] = (cgi_pending){me, 0};
    /* Several pending: stays a list (settle keeps one clean entry in the word). */
    cgi_seq_settle(e);
    cgi_seq_unlock(e);
}

static void cgi_seq_launches(cgi_hobj *e, uintptr_t handle, uint64_t me)
{
    uint32_t tid = cgi_tid_of(me);
    uint64_t w = atomic_load_explicit(&e->seq, memory_order_acquire);
    if (!w) return; /* nothing pending: arguments kept from before */
    /* One thread pending, this one or one that handed the kernel over: the launch consumes it. */
    if (w != CGI_SEQ_LIST &&
        atomic_compare_exchange_strong_explicit(&e->seq, &w, 0, memory_order_acq_rel, memory_order_acquire))
        return;
    cgi_pending hit = {0, 0};
    cgi_seq_lock(e);
    w = atomic_load_explicit(&e->seq, memory_order_acquire);
    cgi_seq_to_list(e, w);
    uint32_t i = 0;
    while (i < e->npend && cgi_tid_of(e->pend[i].who) != tid)
        i++;
    if (i == e->npend) {
        /* Nothing of this thread's pending: it launches what others set and handed over. */
        e->npend = 0;
    } else {
        hit = e->pend[i];
        e->pend[i] = e->pend[--e->npend];
    }
    cgi_seq_settle(e);
    cgi_seq_unlock(e);
    if (hit.intruder)
        cgi_record_violation(CGI_VIOLATION_SEQUENCE, handle, me, CG_RULE_LAUNCHES, hit.intruder, CG_RULE_SETS, hit.who);
}

static void cgi_seq_forget(cgi_hobj *e)
{
    if (!atomic_load_explicit(&e->seq, memory_order_relaxed)) return;
    cgi_seq_lock(e);
    e->npend = 0;
    atomic_store_explicit(&e->seq, 0, memory_order_release);
    cgi_seq_unlock(e);
}

/* ---- the overlap rule --------------------------------------------------------------- */

static void cgi_hold_for(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

void cgi_thr_check_enter(const cg_site *s, const void *args, cgi_thr_call *c)
{
    int32_t tid = cgi_thr_me();
    uint32_t n = s->nrules < CGI_THR_MAX_RULES ? s->nrules : CGI_THR_MAX_RULES;
    c->nent = 0;
    for (uint32_t r = 0; r < n; r++) {
        const cg_rule *rule = &s->rules[r];
        uintptr_t h = cgi_rule_handle(rule, args);
        if (!h) continue; /* NULL handles: the driver's own error, never a violation */
        unsigned a = rule->access;
        int rw = (a & (CG_RULE_READ | CG_RULE_WRITE)) && !cgi_holds_handle(h);
        if (!rw && !(a & (CG_RULE_SETS | CG_RULE_LAUNCHES | CG_RULE_DESTROY))) continue;
        cgi_hobj *e = cgi_thr_entry(h);
        if (!e) continue;
        uint64_t me = cgi_who(tid, s->gid, r);
        if (rw) {
            int write = (a & CG_RULE_WRITE) != 0;
            uint64_t prev = atomic_fetch_add_explicit(&e->count, write ? CGI_W1 : 1, memory_order_acq_rel);
            cgi_slot_take(e, me, prev);
            if (prev && (prev >> 32 || write)) {
                uint64_t other = cgi_slot_other(e, tid);
                cgi_record_violation(CGI_VIOLATION_OVERLAP, h, me, CG_RULE_READ | CG_RULE_WRITE, other,
                                     CG_RULE_READ | CG_RULE_WRITE, 0);
            }
            c->ent[c->nent].e = e;
            c->ent[c->nent].write = (uint8_t)write;
            c->ent[c->nent].destroy = (a & CG_RULE_DESTROY) != 0;
            c->nent++;
        } else if (a & CG_RULE_DESTROY) {
            /* A destroy of a handle this thread holds: still forget its sequence state on leaving. */
            c->ent[c->nent].e = e;
            c->ent[c->nent].write = 2; /* nothing counted */
            c->ent[c->nent].destroy = 1;
            c->nent++;
        }
        if (a & CG_RULE_SETS) cgi_seq_sets(e, me);
        if (a & CG_RULE_LAUNCHES) cgi_seq_launches(e, h, me);
    }
    uint64_t hold = atomic_load_explicit(&cgi_thr_hold_ns, memory_order_relaxed);
    if (hold && c->nent) cgi_hold_for(hold);
}

void cgi_thr_check_leave(const cg_site *s, const void *args, cgi_thr_call *c)
{
    (void)s, (void)args;
    for (unsigned i = 0; i < c->nent; i++) {
        cgi_hobj *e = c->ent[i].e;
        if (c->ent[i].destroy) cgi_seq_forget(e);
        if (c->ent[i].write != 2)
            atomic_fetch_sub_explicit(&e->count, c->ent[i].write ? CGI_W1 : 1, memory_order_acq_rel);
    }
}

/* ---- per-handle locks ---------------------------------------------------------------- */

static pthread_once_t cgi_holds_once = PTHREAD_ONCE_INIT;

/* Once per process: the key that frees a thread's holds. */
static void cgi_holds_key_make(void)
{
    if (pthread_key_create(&cgi_holds_key, cgi_holds_free) != 0) cgi_die("cannot create a thread key for holds");
}

int cgi_thr_lock(const cg_site *s, const void *args, cgi_thr_call *c)
{
    uint32_t n = s->nrules < CGI_THR_MAX_RULES ? s->nrules : CGI_THR_MAX_RULES;
    c->nlock = 0;
    /* Each handle once, write if any of its rules writes it. */
    for (uint32_t r = 0; r < n; r++) {
        const cg_rule *rule = &s->rules[r];
        if (!(rule->access & (CG_RULE_READ | CG_RULE_WRITE))) continue;
        uintptr_t h = cgi_rule_handle(rule, args);
        if (!h || cgi_holds_handle(h)) continue;
        uint8_t write = (rule->access & CG_RULE_WRITE) != 0;
        unsigned k = 0;
        while (k < c->nlock && c->lock[k].handle != h)
            k++;
        if (k < c->nlock) {
            c->lock[k].write |= write;
            continue;
        }
        c->lock[k].handle = h;
        c->lock[k].write = write;
        c->nlock++;
    }
    /* All or none: wait only while holding none, so calls never deadlock on
     * these locks. The lock waited for is kept while the others are tried. */
    int waited = 0;
    unsigned have = c->nlock; /* the one taken by waiting, if any */
    for (;;) {
        unsigned k = 0;
        while (k < c->nlock && (k == have || (c->lock[k].l = cgi_hl_try(0, c->lock[k].handle, c->lock[k].write))))
            k++;
        if (k == c->nlock) return waited;
        for (unsigned j = 0; j < k; j++)
            cgi_hl_unlock(c->lock[j].l, c->lock[j].write);
        if (have > k && have < c->nlock) cgi_hl_unlock(c->lock[have].l, c->lock[have].write);
        waited = 1;
        c->lock[k].l = cgi_hl_lock(0, c->lock[k].handle, c->lock[k].write);
        have = k;
    }
}

void cgi_thr_unlock(cgi_thr_call *c)
{
    for (unsigned k = c->nlock; k-- > 0;)
        cgi_hl_unlock(c->lock[k].l, c->lock[k].write);
}

/* ---- switches ----------------------------------------------------------------------- */

static int cgi_table_alloc(void)
{
    if (cgi_thr_table) return CG_OK;
    size_t size = sizeof(cgi_hobj) << CGI_THR_TABLE_BITS;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return cgi_fail(CG_ENOMEM, "thread checks: cannot map %zu bytes: %s", size, strerror(errno));
    cgi_thr_table = p;
    return CG_OK;
}

int cgi_thr_set_check(int on)
{
    if (on) {
        int rc = cgi_table_alloc();
        if (rc != CG_OK) return rc;
    }
    atomic_store(&cgi_thr_check, on != 0);
    return CG_OK;
}

int cgi_thr_set_serialize(int on)
{
    atomic_store(&cgi_thr_serialize, on != 0);
    return CG_OK;
}

void cgi_thr_set_hold_ns(uint64_t ns) { atomic_store(&cgi_thr_hold_ns, ns); }

void cgi_thr_after_fork_child(void)
{
    /* Only this thread is left: calls other threads were inside are gone,
     * and so are their holds and locks (hlock.c resets the locks). */
    if (cgi_thr_table) madvise(cgi_thr_table, sizeof(cgi_hobj) << CGI_THR_TABLE_BITS, MADV_DONTNEED);
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    cgi_viol_lock = fresh;
    cgi_nviol = 0;
    memset(cgi_vkeys, 0, sizeof cgi_vkeys);
    if (cgi_stats) {
        memset(cgi_stats->violation, 0, sizeof cgi_stats->violation);
        atomic_store(&cgi_stats->h.violations_dropped, 0);
        atomic_store(&cgi_stats->h.handles_untracked, 0);
    }
    if (cgi_my_holds) cgi_my_holds->n = 0;
    cgi_thr_tid = 0;
}

/* ---- the public holds --------------------------------------------------------------- */

typedef struct cgi_wait_arg {
    uintptr_t handle;
    cgi_hl *lock;
} cgi_wait_arg;

static void cgi_hold_wait(void *p)
{
    cgi_wait_arg *a = p;
    a->lock = cgi_hl_lock(0, a->handle, 1);
}

int cg_handle_hold(const void *handle)
{
    uintptr_t h = (uintptr_t)handle;
    if (!h) return cgi_fail(CG_EINVAL, "cg_handle_hold: the handle is NULL: expected a driver object's handle");
    pthread_once(&cgi_holds_once, cgi_holds_key_make);
    cgi_holds *hs = cgi_my_holds;
    if (!hs) {
        hs = calloc(1, sizeof *hs);
        if (!hs) return cgi_fail(CG_ENOMEM, "cg_handle_hold: out of memory");
        if (pthread_setspecific(cgi_holds_key, hs) != 0) {
            free(hs);
            return cgi_fail(CG_ENOMEM, "cg_handle_hold: out of memory");
        }
        cgi_my_holds = hs;
    }
    for (unsigned i = 0; i < hs->n; i++)
        if (hs->h[i].handle == h) {
            hs->h[i].depth++;
            return CG_OK;
        }
    if (hs->n == CGI_THR_MAX_HOLDS)
        return cgi_fail(CG_ENOMEM, "cg_handle_hold: this thread holds %d handles already, the most it may",
                        CGI_THR_MAX_HOLDS);
    cgi_wait_arg a = {h, cgi_hl_try(0, h, 1)};
    if (!a.lock) {
        /* Leave the host runtime before waiting (docs/design.md): the holder may need it to finish. */
        const cg_adapter *ad = atomic_load_explicit(&cgi_cfg.adapter, memory_order_acquire);
        if (ad && atomic_load(&cgi_cfg.adapter_mode) == CG_ADAPTER_ACTIVE && ad->holds())
            ad->call_outside(cgi_hold_wait, &a);
        else
            cgi_hold_wait(&a);
    }
    hs->h[hs->n].handle = h;
    hs->h[hs->n].lock = a.lock;
    hs->h[hs->n].depth = 1;
    hs->n++;
    /* For the checker the hold is a writer of the handle from now until its release. */
    if (atomic_load_explicit(&cgi_thr_check, memory_order_relaxed) && cgi_thr_table) {
        cgi_hobj *e = cgi_thr_entry(h);
        if (e) {
            int32_t tid = cgi_thr_me();
            uint64_t me = cgi_who(tid, CGI_HOLD_GID, 0);
            uint64_t prev = atomic_fetch_add_explicit(&e->count, CGI_W1, memory_order_acq_rel);
            cgi_slot_take(e, me, prev);
            if (prev)
                cgi_record_violation(CGI_VIOLATION_OVERLAP, h, me, CG_RULE_WRITE, cgi_slot_other(e, tid),
                                     CG_RULE_READ | CG_RULE_WRITE, 0);
            hs->h[hs->n - 1].depth |= 1u << 31; /* counted: uncount on release */
        }
    }
    return CG_OK;
}

int cg_handle_release(const void *handle)
{
    uintptr_t h = (uintptr_t)handle;
    cgi_holds *hs = cgi_my_holds;
    unsigned i = 0;
    while (hs && i < hs->n && hs->h[i].handle != h)
        i++;
    if (!hs || i == hs->n)
        return cgi_fail(CG_EINVAL, "cg_handle_release: this thread does not hold handle %p (cg_handle_hold first)",
                        handle);
    unsigned depth = hs->h[i].depth & ~(1u << 31);
    if (depth > 1) {
        hs->h[i].depth--;
        return CG_OK;
    }
    int counted = (hs->h[i].depth >> 31) != 0;
    cgi_hl *l = hs->h[i].lock;
    hs->h[i] = hs->h[--hs->n];
    if (counted) {
        cgi_hobj *e = cgi_thr_entry(h);
        if (e) atomic_fetch_sub_explicit(&e->count, CGI_W1, memory_order_acq_rel);
    }
    cgi_hl_unlock(l, 1);
    return CG_OK;
}
