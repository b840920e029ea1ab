/* Per-site settings: changed now on the layers loaded, and kept for the
 * layers that register later. */
#define _GNU_SOURCE
#include "settings.h"

#include "domain.h"
#include "errors.h"
#include "site.h"
#include "stats.h"

#include <stdlib.h>
#include <string.h>

static cgi_setting *cgi_settings, **cgi_settings_tail = &cgi_settings;

cgi_setting *cgi_setting_add(int kind, const char *site, const char *origin)
{
    cgi_setting *s = calloc(1, sizeof *s);
    if (!s) cgi_die("out of memory");
    s->kind = kind;
    s->site = site ? strdup(site) : NULL;
    s->origin = strdup(origin);
    *cgi_settings_tail = s;
    cgi_settings_tail = &s->next;
    return s;
}

cgi_setting **cgi_settings_mark(void) { return cgi_settings_tail; }

void cgi_settings_drop_from(cgi_setting **mark)
{
    cgi_setting *st = *mark;
    *mark = NULL;
    cgi_settings_tail = mark;
    while (st) {
        cgi_setting *n = st->next;
        free(st->site), free(st->domain), free(st->reason), free(st->origin), free(st);
        st = n;
    }
}

static void cgi_apply_transition(cg_site *s, void *arg) { atomic_store(&s->transition, *(cg_transition *)arg); }

typedef struct cgi_ser_arg {
    uint32_t domain;
    cg_scope scope;
} cgi_ser_arg;

static void cgi_apply_serialize(cg_site *s, void *arg)
{
    cgi_ser_arg *a = arg;
    atomic_store(&s->scope, a->scope);
    atomic_store(&s->domain, a->domain);
}

typedef struct cgi_block_arg {
    int blocking;
    const char *reason;
} cgi_block_arg;

static void cgi_apply_blocking(cg_site *s, void *arg)
{
    cgi_block_arg *a = arg;
    s->reason = a->reason;
    atomic_store(&s->blocking, a->blocking);
}

int cgi_site_set_transition(const char *site, cg_transition t) { return cgi_site_each(site, cgi_apply_transition, &t); }

int cgi_site_set_serialize(const char *site, const char *domain, cg_scope scope)
{
    cgi_ser_arg a = {0, scope};
    if (domain && *domain) {
        int rc = cgi_domain_get(domain, scope, &a.domain);
        if (rc != CG_OK) return rc;
    }
    return cgi_site_each(site, cgi_apply_serialize, &a);
}

int cgi_site_set_blocking(const char *site, int blocking, const char *reason)
{
    cgi_block_arg a = {blocking, reason};
    return cgi_site_each(site, cgi_apply_blocking, &a);
}

int cgi_setting_apply(const cgi_setting *st, cg_layer *layer)
{
    if (!st->site) {
        /* Every site of this layer. */
        for (unsigned i = 0; i < layer->nsites; i++)
            if (st->kind == CGI_SET_TRANSITION) atomic_store(&layer->sites[i].transition, st->transition);
        return CG_OK;
    }
    switch (st->kind) {
    case CGI_SET_TRANSITION: return cgi_site_set_transition(st->site, st->transition);
    case CGI_SET_SERIALIZE: return cgi_site_set_serialize(st->site, st->domain, st->scope);
    default: return cgi_site_set_blocking(st->site, st->blocking, st->reason);
    }
}

/* A name with the layer's prefix that the layer does not have is an error:
 * a typo must not silently leave a site unguarded. */
void cgi_settings_apply_pending(cg_layer *layer)
{
    for (cgi_setting *st = cgi_settings; st; st = st->next) {
        if (st->site && cgi_layer_for_name(st->site) != layer) continue;
        int rc = cgi_setting_apply(st, layer);
        if (rc == CG_ENOENT)
            cgi_die("%s: unknown entry point '%s' (the %s layer has no such function; `callguard list %s` lists them)",
                    st->origin, st->site, layer->api, layer->api);
        if (rc != CG_OK) cgi_die("%s: %s", st->origin, cg_last_error());
    }
    for (unsigned i = 0; i < layer->nsites; i++) cgi_stats_note_policy(&layer->sites[i]);
}
