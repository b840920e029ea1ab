/* Per-handle locks: each handle value has a reader/writer lock of its own.
 *
 * Why not stripes: with locks shared by hash, two unrelated handles wait
 * for each other. A call that waits in the driver for another thread's
 * work (an append to a synchronous command list that waits for an event)
 * then holds up the call on the other handle that would do that work (the
 * append that signals the event): a deadlock the program did not have.
 * Here a lock is held up only by calls on its own handle.
 *
 * A lock exists only while it is held or waited for: an entry in a fixed
 * table of buckets, keyed by (space, handle), claimed on first use and
 * free again when its last holder or waiter leaves. So memory grows with
 * the locks in use at once, not with the handles ever seen, and a handle
 * value that a new object gets after a destroy finds either no lock or the
 * one its users still hold. A bucket whose entries are all in use gets one
 * more block of them, kept for reuse (never freed: a pointer to an entry
 * stays valid memory).
 *
 * Each bucket has a spin lock held only while its entries are looked up
 * and updated, never across a wait or a driver call: two handles in one
 * bucket share nothing longer than those few instructions. A waiter sleeps
 * on its entry's sequence word (a futex), which each release that may let
 * it in bumps. Writers first: a waiting writer keeps new readers out, so a
 * stream of launches (readers) does not starve a setting of arguments. */
#define _GNU_SOURCE
#include "hlock.h"

#include "../common/errors.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CGI_HL_BUCKETS 512
#define CGI_HL_WAYS 2

struct cgi_hl {
    uintptr_t handle; /* 0: free */
    uint32_t space;
    uint32_t readers, writer;          /* holders now */
    uint32_t waiting, waiting_writers; /* threads asleep on seq */
    _Atomic uint32_t seq;
    struct cgi_hl_bucket *bucket;
};

typedef struct cgi_hl_block {
    cgi_hl e[CGI_HL_WAYS];
    struct cgi_hl_block *next;
} cgi_hl_block;

typedef struct cgi_hl_bucket {
    _Atomic uint32_t lock;
    cgi_hl_block first;
} __attribute__((aligned(64))) cgi_hl_bucket;

static cgi_hl_bucket cgi_hl_table[CGI_HL_BUCKETS];

static inline cgi_hl_bucket *cgi_hl_bucket_of(uint32_t space, uintptr_t handle)
{
    /* Handles are pointers to driver objects, often neighbours: mix every bit. */
    uint64_t h = (uint64_t)handle + space * 0x9e3779b97f4a7c15ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return &cgi_hl_table[h & (CGI_HL_BUCKETS - 1)];
}

/* ---- the bucket's spin lock ------------------------------------------------------ */

/* Out of line: another thread is in the bucket for a few instructions, or
 * was preempted there (then yield to it). */
__attribute__((noinline)) static void cgi_hl_spin(cgi_hl_bucket *b)
{
    for (unsigned n = 0;; n++) {
        while (atomic_load_explicit(&b->lock, memory_order_relaxed))
            if (++n < 64)
                __builtin_ia32_pause();
            else
                sched_yield();
        if (!atomic_exchange_explicit(&b->lock, 1, memory_order_acquire)) return;
    }
}

static inline void cgi_hl_enter(cgi_hl_bucket *b)
{
    if (__builtin_expect(atomic_exchange_explicit(&b->lock, 1, memory_order_acquire) != 0, 0)) cgi_hl_spin(b);
}

static inline void cgi_hl_leave(cgi_hl_bucket *b) { atomic_store_explicit(&b->lock, 0, memory_order_release); }

/* ---- entries, under their bucket's lock ---------------------------------------------- */

/* The entry of (space, handle), or a free one claimed for it; NULL when every entry is in use. */
static cgi_hl *cgi_hl_find(cgi_hl_bucket *b, uint32_t space, uintptr_t handle)
{
    cgi_hl *free_e = NULL;
    for (cgi_hl_block *k = &b->first; k; k = k->next)
        for (int i = 0; i < CGI_HL_WAYS; i++) {
            cgi_hl *e = &k->e[i];
            if (e->handle == handle && e->space == space) return e;
            if (!e->handle && !free_e) free_e = e;
        }
    if (free_e) free_e->handle = handle, free_e->space = space, free_e->bucket = b;
    return free_e;
}

static inline int cgi_hl_grant(cgi_hl *e, int write)
{
    if (e->writer) return 0;
    if (write) {
        if (e->readers) return 0;
        e->writer = 1;
    } else {
        if (e->waiting_writers) return 0;
        e->readers++;
    }
    return 1;
}

static inline void cgi_hl_retire(cgi_hl *e)
{
    if (!e->readers && !e->writer && !e->waiting) e->handle = 0;
}

/* ---- taking and releasing ------------------------------------------------------------- */

cgi_hl *cgi_hl_try(uint32_t space, uintptr_t handle, int write)
{
    cgi_hl_bucket *b = cgi_hl_bucket_of(space, handle);
    cgi_hl_enter(b);
    cgi_hl *e = cgi_hl_find(b, space, handle);
    /* No entry free: cgi_hl_lock adds a block (no allocation here, on the common path). */
    if (e && !cgi_hl_grant(e, write)) e = NULL;
    cgi_hl_leave(b);
    return e;
}

cgi_hl *cgi_hl_lock(uint32_t space, uintptr_t handle, int write)
{
    cgi_hl_bucket *b = cgi_hl_bucket_of(space, handle);
    cgi_hl_enter(b);
    cgi_hl *e;
    while (!(e = cgi_hl_find(b, space, handle))) {
        cgi_hl_leave(b);
        cgi_hl_block *k = calloc(1, sizeof *k);
        if (!k) cgi_die("per-handle locks: out of memory");
        cgi_hl_enter(b);
        k->next = b->first.next;
        b->first.next = k;
    }
    if (!cgi_hl_grant(e, write)) {
        e->waiting++;
        e->waiting_writers += (uint32_t)write;
        do {
            uint32_t seen = atomic_load_explicit(&e->seq, memory_order_relaxed);
            cgi_hl_leave(b);
            /* Returns at once when a release bumped seq after it was read. */
            syscall(SYS_futex, &e->seq, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
            cgi_hl_enter(b);
        } while (!cgi_hl_grant(e, write));
        e->waiting--;
        e->waiting_writers -= (uint32_t)write;
    }
    cgi_hl_leave(b);
    return e;
}

void cgi_hl_unlock(cgi_hl *e, int write)
{
    cgi_hl_bucket *b = e->bucket;
    cgi_hl_enter(b);
    if (write)
        e->writer = 0;
    else
        e->readers--;
    /* A writer's release may let anyone in; a reader's only when it was the last. */
    int wake = e->waiting && (write || !e->readers);
    if (wake)
        atomic_fetch_add_explicit(&e->seq, 1, memory_order_relaxed);
    else
        cgi_hl_retire(e);
    cgi_hl_leave(b);
    /* The entry may be another handle's by now: a wake-up there is only spurious. */
    if (wake) syscall(SYS_futex, &e->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void cgi_hl_after_fork_child(void)
{
    /* Writes only what is in use: a table never used stays untouched (no page copied into the child). */
    for (unsigned i = 0; i < CGI_HL_BUCKETS; i++) {
        cgi_hl_bucket *b = &cgi_hl_table[i];
        if (atomic_load_explicit(&b->lock, memory_order_relaxed))
            atomic_store_explicit(&b->lock, 0, memory_order_relaxed);
        for (cgi_hl_block *k = &b->first; k; k = k->next)
            for (int j = 0; j < CGI_HL_WAYS; j++) {
                cgi_hl *e = &k->e[j];
                if (e->handle) e->handle = 0, e->readers = e->writer = e->waiting = e->waiting_writers = 0;
            }
    }
}
