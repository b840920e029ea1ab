/* check.c: the policy's entry point sections against what the header
 * declares (parse.c): each section names a declared entry point, a variant
 * shares its base's policy and report row, a states list names codes of the
 * result type, and a thread rule names a handle parameter. */
#include "gen.h"
#include "policy_ini.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- policy against header ---------------------------------------------- */

static const gen_func *find_func(const gen_api *api, const char *name)
{
    for (size_t i = 0; i < api->nfuncs; i++)
        if (strcmp(api->funcs[i].name, name) == 0) return &api->funcs[i];
    return NULL;
}

/* The declared name that `name` is a suffix variant of ([api] variants):
 * suffixes stack (cuMemcpyHtoD_v2_ptds), and the shortest declared name left
 * after taking them off the end wins. NULL if none: then `name` stands
 * alone, its own site, even if it ends with a suffix (toyQuery_v2 without a
 * toyQuery). */
static const gen_func *suffix_base(const policy *p, const gen_api *api, const char *name)
{
    const gen_func *best = NULL;
    size_t n = strlen(name);
    for (int stripped = 1; stripped;) {
        stripped = 0;
        for (size_t i = 0; i < p->variants.n; i++) {
            size_t m = strlen(p->variants.v[i]);
            if (n > m && strncmp(name + n - m, p->variants.v[i], m) == 0) {
                n -= m;
                stripped = 1;
                for (size_t k = 0; k < api->nfuncs; k++)
                    if (strlen(api->funcs[k].name) == n && strncmp(api->funcs[k].name, name, n) == 0)
                        best = &api->funcs[k];
                break;
            }
        }
    }
    return best;
}

/* Gives each entry point its base (the one whose policy and row it shares)
 * and its wrapper kind, refusing sections that would be ignored. */
static int resolve_variants(const policy *p, gen_api *api)
{
    for (size_t i = 0; i < api->nfuncs; i++) {
        gen_func *f = &api->funcs[i];
        const gen_func *b = suffix_base(p, api, f->name);
        const site_policy *own = policy_find_site(p, f->name);
        if (b && own) {
            gen_error("%s:%d: [%s] is a variant of %s ([api] variants at line %d): it shares [%s]'s policy and report "
                      "row; set its keys in [%s]",
                      p->path, own->line, f->name, b->name, p->variants_line, b->name, b->name);
            return 1;
        }
        const char *base = b ? b->name : own ? own->variant_of : NULL;
        if (base) {
            const site_policy *bs = policy_find_site(p, base);
            if (bs && bs->variant_of) base = bs->variant_of; /* check_sites refuses a chain of variant_of */
        }
        f->base = xstrdup(base);
        const site_policy *sp = policy_find_site(p, base ? base : f->name);
        f->hand = sp && sp->wrapper == WRAPPER_HAND;
        f->forward = sp && sp->wrapper == WRAPPER_FORWARD;
    }
    /* wrapper = forward: no site; the name joins the pass-through names. */
    for (size_t i = 0; i < p->passthrough.n; i++)
        strlist_push(&api->passthrough, p->passthrough.v[i]);
    size_t kept = 0;
    for (size_t i = 0; i < api->nfuncs; i++) {
        if (api->funcs[i].forward) {
            strlist_push(&api->passthrough, api->funcs[i].name);
            gen_func_free(&api->funcs[i]);
        } else {
            api->funcs[kept++] = api->funcs[i];
        }
    }
    api->nfuncs = kept;
    for (size_t i = 0; i < api->nfuncs; i++)
        if (api->funcs[i].base && !find_func(api, api->funcs[i].base)) {
            gen_error("%s: %s is a variant of %s, which has wrapper = forward: forward it too (it follows its base)",
                      p->path, api->funcs[i].name, api->funcs[i].base);
            return 1;
        }
    return 0;
}

/* ---- states: result codes that report a state --------------------------- */

static const gen_code *find_code(const gen_api *api, const char *name)
{
    for (size_t i = 0; i < api->nnames; i++)
        if (strcmp(api->names[i].name, name) == 0) return &api->names[i];
    return NULL;
}

/* Each name of a states list is a code of the result type other than success. */
static int check_state_names(const policy *p, const gen_api *api, const strlist *l, int line, const char *section)
{
    const gen_code *ok = find_code(api, p->success);
    long long success = ok ? ok->value : strtoll(p->success, NULL, 0);
    for (size_t i = 0; i < l->n; i++) {
        const gen_code *c = find_code(api, l->v[i]);
        if (!c) {
            gen_error("%s:%d: [%s]: states: %s is not a result code of %s (the header names %zu)", p->path, line,
                      section, l->v[i], p->result, api->nnames);
            return 1;
        }
        if (c->value == success) {
            gen_error("%s:%d: [%s]: states: %s is the success code (%s): a state is a result other than success",
                      p->path, line, section, l->v[i], p->success);
            return 1;
        }
    }
    return 0;
}

/* Gives each entry point that returns the result type its states: its
 * section's list (its base's for a variant), else [api]'s. */
static int resolve_states(const policy *p, gen_api *api)
{
    if (p->states_line && check_state_names(p, api, &p->states, p->states_line, "api")) return 1;
    for (size_t i = 0; i < p->nsites; i++) {
        const site_policy *sp = &p->sites[i];
        if (!sp->states_line) continue;
        if (!p->result) {
            gen_error("%s:%d: [%s] has states, but [api] names no result type: only a result code can report a state",
                      p->path, sp->states_line, sp->name);
            return 1;
        }
        if (check_state_names(p, api, &sp->states, sp->states_line, sp->name)) return 1;
        const gen_func *f = find_func(api, sp->name);
        if (f && !f->ret_result) {
            gen_error("%s:%d: [%s] has states but returns %s, not %s: only a result code can report a state", p->path,
                      sp->states_line, sp->name, f->ret, p->result);
            return 1;
        }
    }
    for (size_t i = 0; i < api->nfuncs; i++) {
        gen_func *f = &api->funcs[i];
        if (!f->ret_result) continue;
        const site_policy *sp = policy_find_site(p, f->base ? f->base : f->name);
        const strlist *l = sp && sp->states_line ? &sp->states : &p->states;
        f->states = l->n ? l : NULL;
    }
    return 0;
}

static int check_sites(const policy *p, const gen_api *api)
{
    for (size_t i = 0; i < p->passthrough.n; i++) {
        if (find_func(api, p->passthrough.v[i])) {
            gen_error(
                "%s:%d: passthrough: %s is declared by the API headers: it is an entry point, guarded; drop it from "
                "the list (or forward it untouched: wrapper = forward in its section)",
                p->path, p->api_line, p->passthrough.v[i]);
            return 1;
        }
    }
    for (size_t i = 0; i < p->nsites; i++) {
        const site_policy *sp = &p->sites[i];
        if (!find_func(api, sp->name)) {
            fprintf(stderr, "%s:%d: unknown entry point %s: the API headers declare no function of that name", p->path,
                    sp->line, sp->name);
            for (size_t k = 0; k < p->prefixes.n; k++)
                fprintf(stderr, "%s%s", k ? ", " : " with a prefix of ", p->prefixes.v[k]);
            fputc('\n', stderr);
            return 1;
        }
        if (!sp->variant_of) continue;
        const site_policy *base = policy_find_site(p, sp->variant_of);
        if (strcmp(sp->variant_of, sp->name) == 0 || !find_func(api, sp->variant_of)) {
            gen_error("%s:%d: variant_of = %s: expected another entry point the header declares", p->path,
                      sp->variant_line, sp->variant_of);
            return 1;
        }
        if (base && base->variant_of) {
            gen_error("%s:%d: variant_of = %s: that site is itself a variant of %s; name %s instead", p->path,
                      sp->variant_line, sp->variant_of, base->variant_of, base->variant_of);
            return 1;
        }
        const gen_func *sb = suffix_base(p, api, sp->variant_of);
        if (sb) {
            gen_error("%s:%d: variant_of = %s: that name is a variant of %s ([api] variants); name %s instead", p->path,
                      sp->variant_line, sp->variant_of, sb->name, sb->name);
            return 1;
        }
    }
    return 0;
}

/* ---- thread rules: each named parameter must be a handle of the prototype ---- */

typedef struct rule_ctx {
    const policy *p;
    const gen_api *api;
    const site_policy *sp;
    gen_func *f;
    int key;
    int err;
} rule_ctx;

static size_t param_index(const gen_func *f, const char *item, size_t len)
{
    size_t i = 0;
    while (i < f->nparams && !(strlen(f->params[i].name) == len && strncmp(f->params[i].name, item, len) == 0))
        i++;
    return i;
}

/* A parameter's declaration without its name: `CUgraphExec hGraph` -> `CUgraphExec `. */
static size_t decl_type_len(const gen_param *pa)
{
    size_t d = strlen(pa->decl), n = strlen(pa->name);
    return d >= n && strcmp(pa->decl + d - n, pa->name) == 0 ? d - n : d;
}

/* A variant whose header names a parameter otherwise (cuda.h: cuGraphLaunch's
 * hGraph is cuGraphLaunch_ptsz's hGraphExec) takes the rule on the parameter
 * at the base's position, when it has the same type there. */
static size_t variant_param_index(const rule_ctx *c, const gen_func *f, const char *item, size_t len)
{
    if (!f->base) return f->nparams;
    for (size_t b = 0; b < c->api->nfuncs; b++) {
        const gen_func *bf = &c->api->funcs[b];
        if (strcmp(bf->name, f->base) != 0) continue;
        size_t i = param_index(bf, item, len);
        if (i < bf->nparams && i < f->nparams && decl_type_len(&bf->params[i]) == decl_type_len(&f->params[i]) &&
            strncmp(bf->params[i].decl, f->params[i].decl, decl_type_len(&f->params[i])) == 0)
            return i;
        break;
    }
    return f->nparams;
}

static int add_rule_item(const char *item, size_t len, void *arg)
{
    rule_ctx *c = arg;
    gen_func *f = c->f;
    const char *key = cgi_rule_keys[c->key];
    size_t i = param_index(f, item, len);
    if (i == f->nparams) i = variant_param_index(c, f, item, len);
    int line = c->sp->rule_line[c->key];
    const char *own = strcmp(c->sp->name, f->name) == 0 ? "" : " (a variant of ";
    if (i == f->nparams) {
        fprintf(stderr, "%s:%d: %s = %s: %s%s%s%s has no parameter %.*s; its parameters are", c->p->path, line, key,
                c->sp->rules[c->key], f->name, own, *own ? c->sp->name : "", *own ? ")" : "", (int)len, item);
        for (size_t k = 0; k < f->nparams; k++)
            fprintf(stderr, "%s%s", k ? ", " : " ", f->params[k].name);
        if (!f->nparams) fputs(" none", stderr);
        fputc('\n', stderr);
        c->err = 1;
        return 1;
    }
    if (!f->params[i].is_handle) {
        gen_error("%s:%d: %s = %s: parameter %s of %s is `%s`, not a handle: thread rules name handle parameters "
                  "(an opaque pointer type such as cl_kernel or ze_kernel_handle_t, passed by value)",
                  c->p->path, line, key, c->sp->rules[c->key], f->params[i].name, f->name, f->params[i].decl);
        c->err = 1;
        return 1;
    }
    for (size_t r = 0; r < f->nrules; r++)
        if (f->rules[r].param == i) {
            f->rules[r].access |= cgi_rule_key_access[c->key];
            return 0;
        }
    f->rules = xrealloc(f->rules, (f->nrules + 1) * sizeof *f->rules);
    f->rules[f->nrules++] = (gen_rule){i, cgi_rule_key_access[c->key]};
    return 0;
}

/* Each entry point's rules come from its own section or its base's; a
 * variant's own prototype must have the parameters too (by name, or at the
 * base's position with the same type). */
static int resolve_rules(const policy *p, gen_api *api)
{
    for (size_t i = 0; i < api->nfuncs; i++) {
        gen_func *f = &api->funcs[i];
        const site_policy *sp = policy_find_site(p, f->base ? f->base : f->name);
        if (!sp) continue;
        for (int k = 0; k < NRULE_KEYS; k++) {
            if (!sp->rules[k]) continue;
            rule_ctx c = {p, api, sp, f, k, 0};
            pini_split(sp->rules[k], ",", add_rule_item, &c);
            if (c.err) return 1;
        }
    }
    return 0;
}

/* ---- wait_args: parameters of the prototype that a value can show ---- */

typedef struct wait_ctx {
    const policy *p;
    const site_policy *sp;
    gen_func *f;
    int err;
} wait_ctx;

static int add_wait_item(const char *item, size_t len, void *arg)
{
    wait_ctx *c = arg;
    gen_func *f = c->f;
    const char *colon = memchr(item, ':', len);
    size_t nlen = colon ? (size_t)(colon - item) : len;
    size_t i = param_index(f, item, nlen);
    const char *own = strcmp(c->sp->name, f->name) == 0 ? "" : " (a variant of ";
    int line = c->sp->wait_args_line;
    if (i == f->nparams) {
        fprintf(stderr, "%s:%d: wait_args = %s: %s%s%s%s has no parameter %.*s; its parameters are", c->p->path, line,
                c->sp->wait_args, f->name, own, *own ? c->sp->name : "", *own ? ")" : "", (int)nlen, item);
        for (size_t k = 0; k < f->nparams; k++)
            fprintf(stderr, "%s%s", k ? ", " : " ", f->params[k].name);
        if (!f->nparams) fputs(" none", stderr);
        fputc('\n', stderr);
        c->err = 1;
        return 1;
    }
    const char *why = !f->params[i].wait_base              ? "is not an integer, an enum or a pointer"
                      : f->nwaits == WAIT_ARGS_MAX         ? "is one too many: at most 4 are kept"
                      : colon && (colon + 1 == item + len) ? "has a `:` and no word after it"
                                                           : NULL;
    for (size_t w = 0; !why && w < f->nwaits; w++)
        if (f->waits[w].param == i) why = "is named twice";
    if (why) {
        gen_error("%s:%d: wait_args = %s: parameter %s of %s (`%s`) %s", c->p->path, line, c->sp->wait_args,
                  f->params[i].name, f->name, f->params[i].decl, why);
        c->err = 1;
        return 1;
    }
    f->waits = xrealloc(f->waits, (f->nwaits + 1) * sizeof *f->waits);
    f->waits[f->nwaits++] = (gen_wait){i, colon ? xstrndup(colon + 1, (size_t)(item + len - colon - 1)) : NULL};
    return 0;
}

/* Each entry point's wait_args come from its own section or its base's; a
 * variant's prototype must have the parameters too, by name. */
static int resolve_waits(const policy *p, gen_api *api)
{
    for (size_t i = 0; i < api->nfuncs; i++) {
        gen_func *f = &api->funcs[i];
        const site_policy *sp = policy_find_site(p, f->base ? f->base : f->name);
        if (!sp || !sp->wait_args) continue;
        wait_ctx c = {p, sp, f, 0};
        pini_split(sp->wait_args, " \t,", add_wait_item, &c);
        if (c.err) return 1;
    }
    return 0;
}

int check_policy(const policy *p, gen_api *api)
{
    return check_sites(p, api) || resolve_variants(p, api) || resolve_states(p, api) || resolve_rules(p, api) ||
           resolve_waits(p, api);
}
