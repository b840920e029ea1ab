/* The arguments a blocking call waits on, as the hang page shows them
 * (docs/report.md, "What a call waits for"). The call's wrapper stored
 * their values in its thread's slot before the call, with the number the
 * call got (layer.h, cg_wait_note); here the watchdog reads them as a
 * seqlock's reader: the number, the values, the number again. Values of
 * another call (an earlier one whose site kept none, a call on a path that
 * does not number it) are never shown: the number and the site must both
 * be the call's. */
#include "wait_args.h"

#include <inttypes.h>
#include <stdio.h>

static void cgi_wait_format_base(uint32_t base, uint64_t v, char *out, size_t size)
{
    if (base == CG_WAIT_INT)
        snprintf(out, size, "%" PRId64, (int64_t)v);
    else if (base == CG_WAIT_UINT)
        snprintf(out, size, "%" PRIu64, v);
    else
        snprintf(out, size, "0x%" PRIx64, v);
}

void cgi_wait_args_fill(cgi_hang_call *e, cgi_slot *slot, uint64_t seq, const cg_counters *c)
{
    cg_slot_wait *w = &slot->wait;
    e->nargs = 0;
    if (atomic_load_explicit(&w->seq, memory_order_acquire) != seq) return;
    /* Acquire: a value of a later call was stored after that call's number,
     * which the second look at the number then sees. */
    const cg_wait_args *of = atomic_load_explicit(&w->of, memory_order_acquire);
    uint64_t v[CG_WAIT_ARGS_MAX];
    for (unsigned i = 0; i < CG_WAIT_ARGS_MAX; i++)
        v[i] = atomic_load_explicit(&w->v[i], memory_order_acquire);
    if (atomic_load_explicit(&w->seq, memory_order_relaxed) != seq ||
        atomic_load_explicit(&slot->seq, memory_order_relaxed) != seq || !of || of->site->ctr != c)
        return;
    unsigned n = of->n < CG_WAIT_ARGS_MAX ? of->n : CG_WAIT_ARGS_MAX;
    for (unsigned i = 0; i < n; i++) {
        const cg_wait_arg *a = &of->arg[i];
        cgi_hang_arg *out = &e->arg[i];
        snprintf(out->name, sizeof out->name, "%s", a->name ? a->name : "?");
        if (!a->as || !of->format || !of->format(a->as, v[i], out->value, sizeof out->value))
            cgi_wait_format_base(a->base, v[i], out->value, sizeof out->value);
    }
    e->nargs = n;
}
