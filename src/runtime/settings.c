/* Per-site settings: checked against the layers loaded, applied to them,
 * and kept for the layers that register later. A setting is never silently
 * ignored: a name a loaded layer should have and lacks is an error, one
 * that no layer ever had is named on stderr at exit. */
#define _GNU_SOURCE
#include "settings.h"

#include "domain.h"
#include "../common/errors.h"
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

static void cgi_setting_free(cgi_setting *st)
{
    /* st->reason stays: sites may point at it. */
    for (int k = 0; k < CGI_RULE_KEYS; k++)
        free(st->rules[k]);
    free(st->site), free(st->api), free(st->domain), free(st->origin), free(st->states), free(st);
}

void cgi_settings_drop_from(cgi_setting **mark)
{
    cgi_setting *st = *mark;
    *mark = NULL;
    cgi_settings_tail = mark;
    while (st) {
        cgi_setting *n = st->next;
        cgi_setting_free(st);
        st = n;
    }
}

/* Removes *link from the list. */
static void cgi_setting_unlink(cgi_setting **link)
{
    cgi_setting *st = *link;
    *link = st->next;
    if (cgi_settings_tail == &st->next) cgi_settings_tail = link;
    cgi_setting_free(st);
}

static void cgi_apply_transition(cg_site *s, void *arg) { atomic_store(&s->transition, *(cg_transition *)arg); }
static void cgi_apply_count(cg_site *s, void *arg) { atomic_store(&s->uncounted, !*(int *)arg); }

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

typedef struct cgi_states_arg {
    int32_t code[CG_MAX_STATES];
    unsigned n;
} cgi_states_arg;

/* The codes of a states setting as `layer` numbers them; CG_EINVAL naming
 * the first name the layer does not know. */
static int cgi_states_resolve(const cgi_setting *st, const cg_layer *layer, cgi_states_arg *a)
{
    a->n = 0;
    const char *v = st->states;
    while (*v) {
        size_t len = strcspn(v, ",");
        char name[128];
        snprintf(name, sizeof name, "%.*s", (int)len, v);
        long code = 0;
        if (!layer->result_code || !layer->result_code(name, &code) || a->n == CG_MAX_STATES)
            return cgi_fail(CG_EINVAL, "%s: states: %s is not a result code of the %s layer", st->origin, name,
                            layer->api);
        a->code[a->n++] = (int32_t)code;
        v += len;
        if (*v) v++;
    }
    return CG_OK;
}

static void cgi_apply_states(cg_site *s, void *arg)
{
    cgi_states_arg *a = arg;
    if (s->base == s->index) cgi_stats_set_states(s, a->code, a->n);
}

/* The layer a site's states setting is for: the one that has the site. */
static cg_layer *cgi_layer_of_site(const char *name)
{
    cg_site *s = cgi_site_find(name);
    return s ? s->layer : NULL;
}

/* Applies one setting: to every loaded site of its name, or, naming none,
 * to every site of `layer`. CG_ENOENT when no loaded layer has the name. */
static int cgi_setting_for_layer(const cgi_setting *st, const cg_layer *layer)
{
    return !st->api || strcmp(st->api, layer->api) == 0;
}

/* ---- thread-rule keys of a policy file: the layer's own or an error ---------------- */

typedef struct cgi_rule_want {
    unsigned n;
    struct {
        const char *param;
        size_t len;
        unsigned access;
    } r[16];
} cgi_rule_want;

/* "writes = kernel; sets = kernel", as a policy file spells the rules. */
static void cgi_rule_words(FILE *f, const cg_rule *rules, unsigned n)
{
    int any = 0;
    for (int k = 0; k < CGI_RULE_KEYS; k++) {
        int first = 1;
        for (unsigned r = 0; r < n; r++) {
            unsigned a = rules[r].access;
            if (!cgi_rule_has_key(a, k)) continue;
            if (first)
                fprintf(f, "%s%s = ", any ? "; " : "", cgi_rule_keys[k]);
            else
                fputc(',', f);
            fputs(rules[r].param, f);
            first = 0, any = 1;
        }
    }
    if (!any) fputs("none", f);
}

/* CG_OK when the section's rules are the loaded site's; else CG_EINVAL naming both. */
static int cgi_rules_check(const cgi_setting *st)
{
    cg_site *s = cgi_site_find(st->site);
    if (!s) return CG_ENOENT;
    cgi_rule_want w = {0};
    for (int k = 0; k < CGI_RULE_KEYS; k++) {
        for (const char *v = st->rules[k]; v && *v;) {
            while (*v == ',' || *v == ' ' || *v == '\t')
                v++;
            size_t len = strcspn(v, ", \t");
            if (!len) break;
            unsigned i = 0;
            while (i < w.n && !(w.r[i].len == len && strncmp(w.r[i].param, v, len) == 0))
                i++;
            if (i == w.n && w.n < 16) {
                w.r[i].param = v, w.r[i].len = len, w.r[i].access = 0;
                w.n++;
            }
            if (i < 16) w.r[i].access |= cgi_rule_key_access[k];
            v += len;
        }
    }
    int same = w.n == s->nrules;
    for (unsigned i = 0; same && i < w.n; i++) {
        unsigned r = 0;
        while (r < s->nrules &&
               !(strlen(s->rules[r].param) == w.r[i].len && strncmp(s->rules[r].param, w.r[i].param, w.r[i].len) == 0))
            r++;
        same = r < s->nrules && s->rules[r].access == w.r[i].access;
    }
    if (same) return CG_OK;
    char *have = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&have, &len);
    if (!f) cgi_die("out of memory");
    cgi_rule_words(f, s->rules, s->nrules);
    fclose(f);
    int rc = cgi_fail(CG_EINVAL,
                      "%s: thread rules are built into the %s layer, which has %s for %s; a policy file can only "
                      "repeat them (change apis/%s.ini and regenerate the layer with callguard-gen)",
                      st->origin, s->layer->api, have, s->name, s->layer->api);
    free(have);
    return rc;
}

static int cgi_setting_apply(const cgi_setting *st, cg_layer *layer)
{
    if (st->kind == CGI_SET_STATES) {
        cgi_states_arg a;
        if (!st->site) {
            if (!layer || strcmp(layer->api, st->api) != 0) return CG_OK;
            int rc = cgi_states_resolve(st, layer, &a);
            if (rc != CG_OK) return rc;
            for (unsigned i = 0; i < layer->nsites; i++)
                if (layer->sites[i].base == i) cgi_stats_set_states(&layer->sites[i], a.code, a.n);
            cgi_site_states_sync(layer);
            return CG_OK;
        }
        cg_layer *l = cgi_layer_of_site(st->site);
        if (!l) return cgi_fail(CG_ENOENT, "unknown entry point '%s'", st->site);
        int rc = cgi_states_resolve(st, l, &a);
        if (rc != CG_OK) return rc;
        rc = cgi_site_each(st->site, cgi_apply_states, &a);
        cgi_site_states_sync(l);
        return rc;
    }
    if (!st->site) {
        if (!cgi_setting_for_layer(st, layer)) return CG_OK;
        for (unsigned i = 0; i < layer->nsites; i++)
            if (st->kind == CGI_SET_TRANSITION)
                atomic_store(&layer->sites[i].transition, st->transition);
            else if (st->kind == CGI_SET_COUNT)
                atomic_store(&layer->sites[i].uncounted, !st->count);
        return CG_OK;
    }
    switch (st->kind) {
    case CGI_SET_TRANSITION: {
        cg_transition t = st->transition;
        return cgi_site_each(st->site, cgi_apply_transition, &t);
    }
    case CGI_SET_SERIALIZE: {
        cgi_ser_arg a = {0, st->scope};
        if (st->domain && *st->domain) {
            int rc = cgi_domain_get(st->domain, st->scope, &a.domain);
            if (rc != CG_OK) return rc;
        }
        return cgi_site_each(st->site, cgi_apply_serialize, &a);
    }
    case CGI_SET_RULES: return cgi_rules_check(st);
    case CGI_SET_COUNT: {
        int count = st->count;
        return cgi_site_each(st->site, cgi_apply_count, &count);
    }
    default: {
        cgi_block_arg a = {st->blocking, st->reason};
        return cgi_site_each(st->site, cgi_apply_blocking, &a);
    }
    }
}

/* Why a name no loaded site has is wrong, if it is: it has a loaded layer's
 * prefix, or it is a loaded entry point spelt in another case. */
static int cgi_name_error(const char *name, const char *origin)
{
    cg_site *like = cgi_site_find_nocase(name);
    if (like)
        return cgi_fail(CG_ENOENT, "%s: unknown entry point '%s': did you mean '%s' (%s layer)?", origin, name,
                        like->name, like->layer->api);
    cg_layer *l = cgi_layer_for_name(name);
    if (l)
        return cgi_fail(
            CG_ENOENT,
            "%s: unknown entry point '%s' (the %s layer has no such function; `callguard list %s` lists them)", origin,
            name, l->api, l->api);
    return CG_OK;
}

/* A newer setting replaces the older ones it overrides, so settings made
 * again and again through the C API do not pile up. */
static void cgi_setting_supersede(const cgi_setting *st)
{
    for (cgi_setting **link = &cgi_settings; *link && *link != st;) {
        const cgi_setting *o = *link;
        int same =
            o->kind == st->kind && (st->site ? o->site && strcmp(o->site, st->site) == 0
                                             : !o->site && (!st->api || (o->api && strcmp(o->api, st->api) == 0)));
        if (same)
            cgi_setting_unlink(link);
        else
            link = &(*link)->next;
    }
}

void cgi_settings_keep(cgi_setting **mark)
{
    for (cgi_setting *st = *mark; st; st = st->next)
        st->from_env = 1;
}

int cgi_settings_commit(cgi_setting **mark)
{
    const cgi_setting *pending = NULL;
    int rc = CG_OK;
    for (const cgi_setting *st = *mark; st && rc == CG_OK; st = st->next) {
        if (st->kind == CGI_SET_SERIALIZE && st->domain && *st->domain)
            rc = cgi_domain_get(st->domain, st->scope, NULL);
        if (st->kind == CGI_SET_STATES) {
            /* Every loaded layer it is for must know each name. */
            cgi_states_arg a;
            const cg_layer *l = st->site ? cgi_layer_of_site(st->site) : NULL;
            for (cg_layer *o = cgi_layers; o && rc == CG_OK && !st->site; o = o->next)
                if (strcmp(o->api, st->api) == 0) rc = cgi_states_resolve(st, o, &a);
            if (l && rc == CG_OK) rc = cgi_states_resolve(st, l, &a);
        }
        if (rc == CG_OK && st->kind == CGI_SET_RULES && cgi_site_find(st->site)) rc = cgi_rules_check(st);
        if (rc != CG_OK || !st->site || cgi_site_find(st->site)) continue;
        rc = cgi_name_error(st->site, st->origin);
        if (!pending) pending = st;
    }
    if (rc != CG_OK) {
        cgi_settings_drop_from(mark);
        return rc;
    }
    cgi_setting *first = *mark;
    for (cgi_setting *st = first; st; st = st->next) {
        if (!st->site) {
            for (cg_layer *l = cgi_layers; l; l = l->next)
                if (cgi_setting_for_layer(st, l)) cgi_setting_apply(st, l), st->matched = 1;
        } else if (cgi_setting_apply(st, NULL) == CG_OK) {
            st->matched = 1;
        }
    }
    cgi_refresh_all();
    /* The message first: superseding can free `pending` (the same name
     * twice in one value: "a,a"; found by tests/fuzz/fuzz_env.c). */
    if (pending)
        cgi_fail(CG_PENDING, "%s: no loaded layer has entry point '%s'; kept until a layer with it loads",
                 pending->origin, pending->site);
    for (cgi_setting *st = first; st; st = st->next)
        cgi_setting_supersede(st);
    return pending ? CG_PENDING : CG_OK;
}

void cgi_settings_apply_pending(cg_layer *layer)
{
    for (cgi_setting **link = &cgi_settings; *link;) {
        cgi_setting *st = *link;
        int rc = CG_OK, mine = st->site ? cgi_layer_for_name(st->site) == layer : cgi_setting_for_layer(st, layer);
        if (mine) rc = cgi_setting_apply(st, layer);
        if (rc == CG_OK) {
            st->matched |= mine;
        } else if (!st->matched) {
            /* A name this layer should have: a typo must not leave a site unguarded. */
            if (rc == CG_ENOENT)
                cgi_name_error(st->site, st->origin);
            else
                cgi_fail(rc, "%s: %s", st->origin, cg_last_error());
            if (st->from_env) cgi_die("%s", cg_last_error());
            cgi_say("%s; the setting is dropped", cg_last_error());
            cgi_setting_unlink(link);
            continue;
        }
        if (!mine && st->site && !st->matched && cgi_site_find_nocase(st->site)) {
            /* ClBuildProgram, kept before the cl layer loaded. */
            cgi_name_error(st->site, st->origin);
            if (st->from_env) cgi_die("%s", cg_last_error());
            cgi_say("%s; the setting is dropped", cg_last_error());
            cgi_setting_unlink(link);
            continue;
        }
        link = &st->next;
    }
    for (unsigned i = 0; i < layer->nsites; i++)
        cgi_stats_note_policy(&layer->sites[i]);
}

void cgi_settings_report_unmatched(void)
{
    enum { SHOWN = 8 }; /* one line: the first few, then how many more */
    char line[1024];
    size_t len = 0, n = 0;
    for (const cgi_setting *st = cgi_settings; st; st = st->next) {
        if (!st->site || st->matched) continue;
        int dup = 0; /* a policy section gives up to three settings of one name */
        for (const cgi_setting *o = cgi_settings; o != st && !dup; o = o->next)
            dup = o->site && !o->matched && strcmp(o->site, st->site) == 0 && strcmp(o->origin, st->origin) == 0;
        if (dup) continue;
        if (n < SHOWN && len < sizeof line)
            len += (size_t)snprintf(line + len, sizeof line - len, "%s%s (%s)", n ? ", " : "", st->site, st->origin);
        n++;
    }
    if (!n) return;
    if (len >= sizeof line) len = sizeof line - 1;
    if (n > SHOWN)
        cgi_say("never applied, no loaded layer has these %zu entry points: %.*s and %zu more", n, (int)len, line,
                n - SHOWN);
    else
        cgi_say("never applied, no loaded layer has %s: %.*s", n == 1 ? "this entry point" : "these entry points",
                (int)len, line);
}
