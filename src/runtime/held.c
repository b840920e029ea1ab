/* A call left without returning (issue 32). A thread can leave a guarded
 * call without returning through it: cancelled (pthread_cancel) or ended
 * (pthread_exit) in the driver, or jumped out of it (a signal handler's
 * siglongjmp). Neither runs any code of ours, and the call's frame is on a
 * stack that is unwound or reused. What the general path holds while in
 * its driver call is therefore kept here, off the stack, in one record per
 * thread: a thread that ends gives it all back from the record's
 * thread-specific destructor; a thread that jumped out finds it at its
 * next guarded call (cg_call: the call it is "inside" is no longer on its
 * stack, onstack.c) and gives it back then. The fast and counted paths
 * hold no lock and keep nothing here: their call is named in the thread's
 * slot, which is enough to undo it. */
#define _GNU_SOURCE
#include "held.h"

#include "../common/errors.h"
#include "short.h"
#include "site.h"
#include "stats.h"

#include <stdlib.h>

__thread cgi_held *cgi_my_held __attribute__((tls_model("initial-exec")));
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
                atomic_load_explicit(&s->mode, memory_order_relaxed) == CGI_MODE_PEAKS ||
                atomic_load_explicit(&s->mode, memory_order_relaxed) == CGI_MODE_PEAKS_WATCH)
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

void cgi_held_init(void)
{
    if (pthread_key_create(&cgi_held_key, cgi_held_exit) != 0) cgi_die("cannot create a thread key for guarded calls");
}

cgi_held *cgi_held_new(cgi_held *spare)
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

int cgi_still_inside(const cg_site *s)
{
    cgi_held *h = cgi_my_held;
    cgi_onstack_seen none = {0};
    if (cgi_outer_call_on_stack(s->layer, h ? &h->seen : &none)) return 1;
    cgi_abandon(h);
    return 0;
}

void cgi_held_after_fork_child(void)
{
    if (cgi_my_held) cgi_my_held->stage = 0;
}
