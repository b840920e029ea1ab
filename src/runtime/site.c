/* Layers, sites and their policy slots. Writers hold cg_cfg_lock; the
 * guarded-call path reads the slots with plain atomic loads. A site's
 * `direct` pointer is the one thing the fast path reads: it is the real
 * function exactly when the site has nothing to do. */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <string.h>

cg_layer *cg_layers;

/* Load addresses of callguard's own objects (the runtime, layers, shims):
 * a resolution that lands in one of them would call back into callguard. */
#define CG_MAX_OWN 16
static void *cg_own[CG_MAX_OWN];
static _Atomic int cg_nown;

void cg_note_own_object(const void *addr)
{
    Dl_info info;
    if (!dladdr(addr, &info) || !info.dli_fbase) return;
    int n = atomic_load(&cg_nown);
    for (int i = 0; i < n; i++)
        if (cg_own[i] == info.dli_fbase) return;
    if (n < CG_MAX_OWN) {
        cg_own[n] = info.dli_fbase;
        atomic_store(&cg_nown, n + 1);
    }
}

/* Layers loaded as soname shims: the file is named by the vendor soname
 * (lib/callguard/shims/libOpenCL.so.1). */
static cg_layer *cg_shims[CG_MAX_OWN];
static _Atomic int cg_nshims;

static void cg_note_if_shim(cg_layer *l)
{
    Dl_info info;
    if (!l->soname || !dladdr(l, &info) || !info.dli_fname) return;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    int n = atomic_load(&cg_nshims);
    if (strcmp(base, l->soname) == 0 && n < CG_MAX_OWN) {
        cg_shims[n] = l;
        atomic_store(&cg_nshims, n + 1);
    }
}

int cg_layer_is_shim(const cg_layer *l)
{
    int n = atomic_load(&cg_nshims);
    for (int i = 0; i < n; i++)
        if (cg_shims[i] == l) return 1;
    return 0;
}

int cg_is_callguard_object(const void *addr)
{
    Dl_info info;
    if (!dladdr(addr, &info)) return 0;
    int n = atomic_load(&cg_nown);
    for (int i = 0; i < n; i++)
        if (cg_own[i] == info.dli_fbase) return 1;
    return 0;
}

void cg_site_refresh(cg_site *s)
{
    void *real = atomic_load_explicit(&s->real, memory_order_acquire);
    int idle = real != NULL && !atomic_load(&cg_cfg.stats_on) && atomic_load(&s->domain) == 0;
    if (idle) {
        const cg_adapter *ad = atomic_load(&cg_cfg.adapter);
        if (ad && atomic_load(&cg_cfg.adapter_mode) == CG_ADAPTER_ACTIVE) {
            uint32_t t = atomic_load(&s->transition);
            if (t == CG_TRANSITION_ALWAYS || (t == CG_TRANSITION_BLOCKING && atomic_load(&s->blocking))) idle = 0;
        }
    }
    atomic_store_explicit(&s->direct, idle ? real : NULL, memory_order_release);
}

void cg_refresh_all(void)
{
    for (cg_layer *l = cg_layers; l; l = l->next)
        for (unsigned i = 0; i < l->nsites; i++) cg_site_refresh(&l->sites[i]);
}

static int cg_has_prefix(const cg_layer *l, const char *name)
{
    const char *p = l->prefixes;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        if (n && strncmp(name, p, n) == 0) return 1;
        p += n;
        while (*p == ',' || *p == ' ') p++;
    }
    return 0;
}

cg_layer *cg_layer_for_name(const char *name)
{
    for (cg_layer *l = cg_layers; l; l = l->next)
        if (cg_has_prefix(l, name)) return l;
    return NULL;
}

static cg_site *cg_site_in(cg_layer *l, const char *name)
{
    for (unsigned i = 0; i < l->nsites; i++)
        if (strcmp(l->sites[i].name, name) == 0) return &l->sites[l->sites[i].base];
    return NULL;
}

cg_site *cg_site_find(const char *name)
{
    for (cg_layer *l = cg_layers; l; l = l->next) {
        cg_site *s = cg_site_in(l, name);
        if (s) return s;
    }
    return NULL;
}

int cg_site_each(const char *name, void (*fn)(cg_site *, void *), void *arg)
{
    int found = 0;
    for (cg_layer *l = cg_layers; l; l = l->next) {
        cg_site *base = cg_site_in(l, name);
        if (!base) continue;
        found = 1;
        for (unsigned i = 0; i < l->nsites; i++)
            if (l->sites[i].base == base->index) {
                fn(&l->sites[i], arg);
                cg_site_refresh(&l->sites[i]);
            }
        cg_stats_note_policy(base);
    }
    if (!found) return cg_fail(CG_ENOENT, "unknown entry point '%s'", name);
    return CG_OK;
}

void cg_layer_register(cg_layer *l)
{
    if (!l || l->abi != CG_LAYER_ABI) {
        fprintf(stderr, "callguard: a layer built for another ABI (%d, expected %d) was not registered\n",
                l ? l->abi : -1, CG_LAYER_ABI);
        return;
    }
    pthread_mutex_lock(&cg_cfg_lock);
    for (cg_layer *o = cg_layers; o; o = o->next)
        if (o == l) {
            pthread_mutex_unlock(&cg_cfg_lock);
            return;
        }
    cg_note_own_object(l);
    cg_note_if_shim(l);
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
    for (unsigned i = 0; i < l->nsites; i++) {
        cg_site *s = &l->sites[i];
        const cg_site_default *d = &l->defaults[s->base];
        atomic_store(&s->transition, d->transition);
        atomic_store(&s->blocking, d->blocking);
        atomic_store(&s->scope, d->scope);
        s->reason = d->reason;
        uint32_t dom = 0;
        if (d->serialize && cg_domain_get(d->serialize, (cg_scope)d->scope, &dom) != CG_OK) {
            fprintf(stderr, "callguard: %s: %s\n", s->name, cg_last_error());
            dom = 0;
        }
        atomic_store(&s->domain, dom);
        s->ctr = s->base == i ? cg_stats_record_site(l->api, s->name) : NULL;
    }
    for (unsigned i = 0; i < l->nsites; i++) {
        cg_site *s = &l->sites[i];
        if (!s->ctr) s->ctr = l->sites[s->base].ctr;
        if (s->base == i) cg_stats_note_policy(s);
    }
    l->next = cg_layers;
    cg_layers = l;
    cg_env_apply_pending(l);
    for (unsigned i = 0; i < l->nsites; i++) cg_site_refresh(&l->sites[i]);
    pthread_mutex_unlock(&cg_cfg_lock);
}

const char *cg_result_name(const char *api, long result)
{
    if (!api) return NULL;
    for (cg_layer *l = cg_layers; l; l = l->next)
        if (strcmp(l->api, api) == 0 && l->result_name) return l->result_name(result);
    return NULL;
}

long cg_list_sites(const char *api, cg_site_info *out, size_t max)
{
    long n = 0;
    pthread_mutex_lock(&cg_cfg_lock);
    for (cg_layer *l = cg_layers; l; l = l->next) {
        if (api && strcmp(api, l->api) != 0) continue;
        for (unsigned i = 0; i < l->nsites; i++) {
            const cg_site *s = &l->sites[i];
            if ((size_t)n < max) {
                cg_site_info *o = &out[n];
                o->api = l->api;
                o->name = s->name;
                o->variant_of = s->base != i ? l->sites[s->base].name : NULL;
                o->transition = (cg_transition)atomic_load(&s->transition);
                o->blocking = (int)atomic_load(&s->blocking);
                o->reason = o->blocking ? s->reason : NULL;
                o->domain = cg_domain_name(atomic_load(&s->domain));
                o->scope = (cg_scope)atomic_load(&s->scope);
            }
            n++;
        }
    }
    pthread_mutex_unlock(&cg_cfg_lock);
    return n;
}
