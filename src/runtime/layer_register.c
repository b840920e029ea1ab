/* A layer joining the process: from its constructor (cg_layer_register),
 * before main or whenever it is dlopened. Its sites get the generated
 * defaults, a statistics record each, then every kept setting that names
 * them. */
#define _GNU_SOURCE
#include "internal.h"

#include "domain.h"
#include "quirks.h"
#include "resolve.h"
#include "settings.h"
#include "site.h"
#include "stats.h"
#include "threads.h"

#include <string.h>

void cg_layer_register(cg_layer *l)
{
    if (!l || l->abi != CG_LAYER_ABI) {
        fprintf(stderr, "callguard: a layer built for another ABI (%d, expected %d) was not registered\n",
                l ? l->abi : -1, CG_LAYER_ABI);
        return;
    }
    if (!l->api || !*l->api || strlen(l->api) >= CGI_API_NAME_MAX || !l->library_env || !l->prefixes) {
        fprintf(stderr,
                "callguard: a layer with API name '%s' was not registered: it needs an API name of 1 to %d "
                "characters, a library variable and prefixes\n",
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
        const cg_site_default *d = &l->defaults[i];
        s->name = d->name;
        s->layer = l;
        s->index = i;
        s->base = i;
        if (d->base)
            for (unsigned j = 0; j < l->nsites; j++)
                if (strcmp(l->defaults[j].name, d->base) == 0) s->base = j;
    }
    cgi_thr_layer_registered(l);
    for (unsigned i = 0; i < l->nsites; i++) {
        cg_site *s = &l->sites[i];
        const cg_site_default *d = &l->defaults[s->base];
        atomic_store(&s->transition, d->transition);
        atomic_store(&s->blocking, d->blocking);
        atomic_store(&s->scope, d->scope);
        s->reason = d->reason;
        uint32_t dom = 0;
        if (d->serialize && cgi_domain_get(d->serialize, (cg_scope)d->scope, &dom) != CG_OK) {
            fprintf(stderr, "callguard: %s: %s\n", s->name, cg_last_error());
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
            for (unsigned k = 0; k < n; k++) codes[k] = d->states[k];
            cgi_stats_set_states(s, codes, n);
            cgi_stats_note_policy(s);
        }
    }
    l->next = cgi_layers;
    /* Release: cgi_site_of_counters (call.c) walks the list without the lock. */
    __atomic_store_n(&cgi_layers, l, __ATOMIC_RELEASE);
    cgi_settings_apply_pending(l);
    cgi_quirks_apply_layer(l);
    for (unsigned i = 0; i < l->nsites; i++) cgi_site_refresh(&l->sites[i]);
    pthread_mutex_unlock(&cgi_cfg_lock);
}
