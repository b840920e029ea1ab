/* A layer joining the process: from its constructor (cg_layer_register),
 * before main or whenever it is dlopened. Its sites get the generated
 * defaults, a statistics record each, then every kept setting that names
 * them. */
#define _GNU_SOURCE
#include "internal.h"
#include "../common/errors.h"

#include "domain.h"
#include "quirks.h"
#include "resolve.h"
#include "settings.h"
#include "site.h"
#include "stats.h"
#include "threads.h"

#include <stdlib.h>
#include <string.h>

/* A layer built before `collective` has its bytes as padding (zeros): the
 * field lives in the struct's tail padding. `args` (layer ABI 13) made it
 * 80 bytes: layers of ABI 12 are refused by their number. */
_Static_assert(sizeof(void *) != 8 || sizeof(cg_site_default) == 80, "cg_site_default's layout is the layer ABI's");
_Static_assert(sizeof(void *) != 8 || sizeof(cg_site) == 128, "cg_site's `args` is in its padding");

static uint32_t cgi_name_hash(const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    return h;
}

/* Each variant's base site (its `base` names another entry point of the
 * layer), found through a table of the layer's names: looking each one up
 * among all sites was quadratic (the CUDA layer: 118,000 strcmp calls in
 * every process). Without memory for the table, the plain search. */
static void cgi_find_bases(cg_layer *l)
{
    unsigned n = l->nsites, any = 0;
    for (unsigned i = 0; i < n; i++)
        any |= l->defaults[i].base != NULL;
    if (!any) return;
    unsigned size = 16;
    while (size < 2 * n)
        size *= 2;
    unsigned *t = calloc(size, sizeof *t); /* site index + 1; 0: empty */
    for (unsigned i = 0; t && i < n; i++) {
        unsigned h = cgi_name_hash(l->defaults[i].name) & (size - 1);
        while (t[h])
            h = (h + 1) & (size - 1);
        t[h] = i + 1;
    }
    for (unsigned i = 0; i < n; i++) {
        const char *base = l->defaults[i].base;
        if (!base) continue;
        /* The last site of that name, as the plain search gave: one probe
         * sequence meets a name's sites in the order they were put in. */
        if (t) {
            for (unsigned h = cgi_name_hash(base) & (size - 1); t[h]; h = (h + 1) & (size - 1))
                if (strcmp(l->defaults[t[h] - 1].name, base) == 0) l->sites[i].base = t[h] - 1;
        } else {
            for (unsigned j = 0; j < n; j++)
                if (strcmp(l->defaults[j].name, base) == 0) l->sites[i].base = j;
        }
    }
    free(t);
}

void cg_layer_register(cg_layer *l)
{
    if (!l || l->abi != CG_LAYER_ABI) {
        cgi_say("a layer built for another ABI (%d, expected %d) was not registered", l ? l->abi : -1, CG_LAYER_ABI);
        return;
    }
    if (!l->api || !*l->api || strlen(l->api) >= CGI_API_NAME_MAX || !l->library_env || !l->prefixes) {
        cgi_say("a layer with API name '%s' was not registered: it needs an API name of 1 to %d "
                "characters, a library variable and prefixes",
                l->api ? l->api : "(none)", CGI_API_NAME_MAX - 1);
        return;
    }
    pthread_mutex_lock(&cgi_cfg_lock);
    for (cg_layer *o = cgi_layers; o; o = o->next)
        if (o == l) {
            pthread_mutex_unlock(&cgi_cfg_lock);
            return;
        }
    cgi_note_own_object(l);
    cgi_note_if_shim(l);
    for (unsigned i = 0; i < l->nsites; i++) {
        cg_site *s = &l->sites[i];
        s->name = l->defaults[i].name;
        s->layer = l;
        s->index = i;
        s->base = i;
        s->args = l->defaults[i].args;
        s->slot_tp = cg_tp_offset(&cg_my_slot); /* the same in every thread (initial-exec) */
    }
    cgi_find_bases(l);
    cgi_thr_layer_registered(l);
    for (unsigned i = 0; i < l->nsites; i++) {
        cg_site *s = &l->sites[i];
        const cg_site_default *d = &l->defaults[s->base];
        atomic_store(&s->transition, d->transition);
        atomic_store(&s->blocking, d->blocking);
        atomic_store(&s->uncounted, d->uncounted);
        atomic_store(&s->scope, d->scope);
        s->reason = d->reason;
        uint32_t dom = 0;
        if (d->serialize && cgi_domain_get(d->serialize, (cg_scope)d->scope, &dom) != CG_OK) {
            cgi_say("%s: %s", s->name, cg_last_error());
            dom = 0;
        }
        atomic_store(&s->domain, dom);
        s->ctr = s->base == i ? cgi_stats_record_site(l->api, s->name) : NULL;
    }
    for (unsigned i = 0; i < l->nsites; i++) {
        cg_site *s = &l->sites[i];
        if (!s->ctr) s->ctr = l->sites[s->base].ctr;
        if (s->base == i) {
            const cg_site_default *d = &l->defaults[i];
            int32_t codes[CG_MAX_STATES];
            unsigned n = d->states && d->nstates <= CG_MAX_STATES ? d->nstates : 0;
            for (unsigned k = 0; k < n; k++)
                codes[k] = d->states[k];
            cgi_stats_set_states(s, codes, n);
            cgi_stats_note_policy(s);
        }
    }
    l->next = cgi_layers;
    /* Release: cgi_site_of_counters (short.c) walks the list without the lock. */
    __atomic_store_n(&cgi_layers, l, __ATOMIC_RELEASE);
    cgi_settings_apply_pending(l);
    cgi_quirks_apply_layer(l);
    for (unsigned i = 0; i < l->nsites; i++)
        cgi_site_refresh(&l->sites[i]);
    pthread_mutex_unlock(&cgi_cfg_lock);
}

/* A row of its own for one instance of a site's calls (layer.h). Rows are made under the configuration's lock, as
 * the sites' own are; a row's counters live as long as the statistics region. */
struct cg_counters *cg_site_row(cg_site *site, const char *tag)
{
    if (!site || !site->ctr || !tag || !*tag || !cgi_stats) return NULL;
    pthread_mutex_lock(&cgi_cfg_lock);
    cg_counters *c = cgi_stats_record_row(site->layer ? site->layer->api : "", site->ctr, tag);
    pthread_mutex_unlock(&cgi_cfg_lock);
    return c;
}

void cg_row_count(struct cg_counters *row, int failed)
{
    if (!row || !atomic_load_explicit(&cgi_cfg.stats_on, memory_order_relaxed)) return;
    atomic_fetch_add_explicit(&row->calls, 1, memory_order_relaxed);
    if (failed) atomic_fetch_add_explicit(&row->errors, 1, memory_order_relaxed);
}
