/* Named lock domains, shared by every layer in the process. A domain is
 * created the first time a site is serialized into it and lives for the
 * rest of the process, so a site can hold its id without a reference count.
 * A domain has one scope: process (one lock) or handle (one lock per
 * value of the first input handle, hlock.c: two handles never wait for
 * each other). Mixing scopes in one domain would give
 * two locks that do not exclude each other, so it is refused. A site of
 * scope once (serialized until its first success) takes the process lock
 * while it is closed, and a site of scope shared takes it shared: both may
 * join a process-scoped domain.
 *
 * The process lock is a reader/writer lock of one word (cgi_rw): any number
 * of shared holders at once, an exclusive holder alone. Writers first: an
 * exclusive caller that waits keeps new shared callers out until it has
 * been in, so a stream of shared calls (launches) never starves an
 * exclusive one (a module unload); shared callers wait while exclusive
 * ones queue. Uncontended, taking it either way is one compare-and-swap,
 * giving it back one atomic add. */
#define _GNU_SOURCE
#include "domain.h"

#include "../common/errors.h"
#include "hlock.h"
#include "../common/names.h"
#include "config.h"

#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- the process lock: shared or exclusive ---------------------------------------
 * state: the exclusive holder (bit 0), the exclusive callers waiting (bits
 * 1-20), the shared holders (bits 21-44) and all callers waiting (bits
 * 45-63). A waiter sleeps on seq (a futex), which a release that may let
 * it in bumps. The layout is for the uncontended paths: what keeps a
 * shared caller out is one 32-bit mask, and whether anyone waits is one
 * shift. */
#define CGI_RW_WRITER 1ull
#define CGI_RW_WWAIT (1ull << 1)
#define CGI_RW_WWAITS (0xfffffull << 1)
#define CGI_RW_READER (1ull << 21)
#define CGI_RW_READERS (0xffffffull << 21)
#define CGI_RW_WAIT (1ull << 45)
#define CGI_RW_WAITS_SHIFT 45

typedef struct cgi_rw {
    _Atomic uint64_t state;
    _Atomic uint32_t seq;
} cgi_rw;

static void cgi_rw_wake(cgi_rw *l)
{
    atomic_fetch_add(&l->seq, 1);
    syscall(SYS_futex, &l->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* A shared holder left while callers wait: the last one out lets a waiting
 * writer in. Read again, not from the release (the fast path keeps no copy):
 * no shared caller comes in while a writer waits, and a writer that came in
 * since wakes them as it leaves. */
__attribute__((noinline)) static void cgi_rw_shared_left(cgi_rw *l)
{
    if (!(atomic_load(&l->state) & CGI_RW_READERS)) cgi_rw_wake(l);
}

static inline void cgi_rw_unlock_shared(cgi_rw *l)
{
    uint64_t s = atomic_fetch_sub(&l->state, CGI_RW_READER);
    if (__builtin_expect(s >> CGI_RW_WAITS_SHIFT, 0)) cgi_rw_shared_left(l);
}

static inline void cgi_rw_unlock_exclusive(cgi_rw *l)
{
    uint64_t s = atomic_fetch_sub(&l->state, CGI_RW_WRITER);
    if (__builtin_expect(s >> CGI_RW_WAITS_SHIFT, 0)) cgi_rw_wake(l);
}

static inline int cgi_rw_try_exclusive(cgi_rw *l)
{
    uint64_t s = 0;
    if (atomic_compare_exchange_strong_explicit(&l->state, &s, CGI_RW_WRITER, memory_order_acquire,
                                                memory_order_relaxed))
        return 1;
    /* Callers wait but none holds it (they are being woken): take it. */
    while (!(s & (CGI_RW_READERS | CGI_RW_WRITER)))
        if (atomic_compare_exchange_weak(&l->state, &s, s | CGI_RW_WRITER)) return 1;
    return 0;
}

/* In at once unless a writer holds it or waits for it. A load, then a
 * compare-and-swap: 2 Ir more than the exclusive path. An unconditional
 * atomic add that backs out when it finds a writer has no more Ir than the
 * exclusive path, but cost 15 ns a call more on the AMD EPYC here (bench
 * row 3sh). */
static inline int cgi_rw_try_shared(cgi_rw *l)
{
    uint64_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
    while (!(s & (CGI_RW_WRITER | CGI_RW_WWAITS)))
        if (atomic_compare_exchange_weak_explicit(&l->state, &s, s + CGI_RW_READER, memory_order_acquire,
                                                  memory_order_relaxed))
            return 1;
    return 0;
}

/* Waits until the lock is granted: counted among the waiters meanwhile, and
 * taken in the same step that takes this caller off them. */
__attribute__((noinline)) static void cgi_rw_wait(cgi_rw *l, int exclusive)
{
    uint64_t mine = CGI_RW_WAIT + (exclusive ? CGI_RW_WWAIT : 0);
    uint64_t held = exclusive ? CGI_RW_WRITER : CGI_RW_READER;
    uint64_t block = exclusive ? CGI_RW_READERS | CGI_RW_WRITER : CGI_RW_WRITER | CGI_RW_WWAITS;
    atomic_fetch_add(&l->state, mine);
    for (;;) {
        /* seq before state: a release after this reading of state bumps seq, and the wait returns at once. */
        uint32_t seen = atomic_load(&l->seq);
        uint64_t s = atomic_load(&l->state);
        /* A waiting writer keeps shared callers out (a writer's own count is not in its `block`). */
        while (!(s & block))
            if (atomic_compare_exchange_weak(&l->state, &s, s - mine + held)) return;
        syscall(SYS_futex, &l->seq, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
    }
}

typedef struct cgi_domain {
    char name[CGI_DOMAIN_NAME_MAX];
    uint32_t scope;
    cgi_rw lock;
} cgi_domain;

static cgi_domain cgi_domains[CGI_MAX_DOMAINS];
static _Atomic uint32_t cgi_ndomains;

static void cgi_domain_init_locks(cgi_domain *d)
{
    atomic_store_explicit(&d->lock.state, 0, memory_order_relaxed);
    atomic_store_explicit(&d->lock.seq, 0, memory_order_relaxed);
}

/* The lock a site of scope `scope` takes: once's and shared's are the process's. */
static uint32_t cgi_lock_scope(uint32_t scope) { return scope == CG_SCOPE_HANDLE ? CG_SCOPE_HANDLE : CG_SCOPE_PROCESS; }

/* Caller holds cgi_cfg_lock. */
int cgi_domain_get(const char *name, cg_scope scope, uint32_t *id)
{
    size_t len = strlen(name);
    if (len == 0 || len >= CGI_DOMAIN_NAME_MAX)
        return cgi_fail(CG_EINVAL, "domain name '%s': expected 1 to %d characters", name, CGI_DOMAIN_NAME_MAX - 1);
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                 ch == '-' || ch == '.';
        if (!ok) return cgi_fail(CG_EINVAL, "domain name '%s': expected letters, digits, '_', '-' or '.'", name);
    }
    uint32_t n = atomic_load(&cgi_ndomains);
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(cgi_domains[i].name, name) != 0) continue;
        if (cgi_domains[i].scope != cgi_lock_scope(scope))
            return cgi_fail(CG_EINVAL, "domain '%s' is %s-scoped; a site cannot join it with scope %s", name,
                            cgi_scope_name(cgi_domains[i].scope), cgi_scope_name(scope));
        if (id) *id = i + 1;
        return CG_OK;
    }
    if (!id) return CG_OK; /* only checking */
    if (n == CGI_MAX_DOMAINS) return cgi_fail(CG_ENOMEM, "too many lock domains (at most %d)", CGI_MAX_DOMAINS);
    cgi_domain *d = &cgi_domains[n];
    memcpy(d->name, name, len + 1);
    d->scope = cgi_lock_scope(scope);
    cgi_domain_init_locks(d);
    atomic_store(&cgi_ndomains, n + 1);
    *id = n + 1;
    return CG_OK;
}

const char *cgi_domain_name(uint32_t id)
{
    id &= CGI_DOM_ID;
    return id && id <= atomic_load(&cgi_ndomains) ? cgi_domains[id - 1].name : "";
}

cgi_dlock cgi_domain_lock(uint32_t id, uint32_t scope, const void *key, int *waited, cgi_peak *waiting)
{
    /* Whether it waited: the caller times only a wait that happens, so an
     * uncontended lock costs no clock and no count. */
    if (scope == CG_SCOPE_HANDLE && key) {
        cgi_hl *l = cgi_hl_try(id, (uintptr_t)key, 1);
        if (l) return l;
        if (waiting) cgi_peak_in(waiting);
        l = cgi_hl_lock(id, (uintptr_t)key, 1), *waited = 1;
        if (waiting) cgi_peak_out(waiting);
        return l;
    }
    cgi_rw *m = &cgi_domains[id - 1].lock;
    int exclusive = scope != CG_SCOPE_SHARED;
    if (exclusive ? cgi_rw_try_exclusive(m) : cgi_rw_try_shared(m)) return NULL;
    if (waiting) cgi_peak_in(waiting);
    cgi_rw_wait(m, exclusive), *waited = 1;
    if (waiting) cgi_peak_out(waiting);
    return NULL;
}

void cgi_domain_unlock(uint32_t id, cgi_dlock l)
{
    if (l) {
        cgi_hl_unlock(l, 1);
        return;
    }
    /* A holder that finds the writer's bit set is that writer: no shared
     * holder is ever in beside it. */
    cgi_rw *m = &cgi_domains[id - 1].lock;
    if (atomic_load_explicit(&m->state, memory_order_relaxed) & CGI_RW_WRITER)
        cgi_rw_unlock_exclusive(m);
    else
        cgi_rw_unlock_shared(m);
}

/* After fork only the forking thread exists: locks other threads held stay
 * held in the child forever unless reset (the handle scope's: hlock.c). */
void cgi_domains_after_fork_child(void)
{
    uint32_t n = atomic_load(&cgi_ndomains);
    for (uint32_t i = 0; i < n; i++)
        cgi_domain_init_locks(&cgi_domains[i]);
}

/* ---- held by hand (layer.h) ------------------------------------------------
 * A hand-written wrapper holds the domain between its own real calls, on a
 * thread already inside the guarded call: no statistics, no runtime. */
uint32_t cg_domain_id(const char *name)
{
    uint32_t id = 0;
    pthread_mutex_lock(&cgi_cfg_lock);
    if (!name || cgi_domain_get(name, CG_SCOPE_PROCESS, &id) != CG_OK) id = 0;
    pthread_mutex_unlock(&cgi_cfg_lock);
    return id;
}

void cg_domain_hold(uint32_t id)
{
    cgi_rw *m = &cgi_domains[id - 1].lock;
    if (!cgi_rw_try_exclusive(m)) cgi_rw_wait(m, 1);
}

void cg_domain_release(uint32_t id) { cgi_rw_unlock_exclusive(&cgi_domains[id - 1].lock); }
