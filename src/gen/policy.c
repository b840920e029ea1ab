/* policy.c: turns a policy file, read and checked by the reader that
 * libcallguard shares (src/policy/policy_ini.c), into the generator's
 * `policy`. What needs the header (entry point names, result codes) is
 * checked by parse.c once the header is read; what only the generator does
 * (reading a pass-through list file) is checked here. */
#include "gen.h"

#include "policy_ini.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int push_item(const char *item, size_t len, void *arg)
{
    char *s = xstrndup(item, len);
    strlist_push(arg, s);
    free(s);
    return 0;
}

static void split(strlist *out, const char *v, const char *seps) { pini_split(v, seps, push_item, out); }

/* passthrough = NAME, NAME... or @FILE (relative to the policy file): one
 * name per line, `#` starts a comment. Names the vendor library exports but
 * the header does not declare; parse.c checks they are not entry points. */
static int read_passthrough(pini_file *f, policy *p, const char *v, int line)
{
    if (*v != '@') {
        split(&p->passthrough, v, ", \t");
    } else {
        const char *slash = strrchr(p->path, '/');
        char *path =
            v[1] == '/' || !slash ? xstrdup(v + 1) : xasprintf("%.*s/%s", (int)(slash - p->path), p->path, v + 1);
        FILE *in = fopen(path, "r");
        if (!in) {
            pini_error(f, line, "passthrough = %s: cannot read %s: %s", v, path, strerror(errno));
            free(path);
            return 1;
        }
        char *text = NULL;
        size_t cap = 0;
        while (getline(&text, &cap, in) >= 0) {
            text[strcspn(text, "#")] = '\0';
            split(&p->passthrough, text, " \t\r\n");
        }
        free(text);
        fclose(in);
        free(path);
    }
    for (size_t i = 0; i < p->passthrough.n; i++) {
        const char *n = p->passthrough.v[i];
        int ok = (n[0] >= 'A' && n[0] <= 'Z') || (n[0] >= 'a' && n[0] <= 'z') || n[0] == '_';
        for (const char *c = n; *c && ok; c++)
            ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
        if (!ok) return pini_error(f, line, "passthrough: %s is not a function name", n);
        for (size_t j = 0; j < i; j++)
            if (strcmp(n, p->passthrough.v[j]) == 0) return pini_error(f, line, "passthrough: %s is listed twice", n);
    }
    return 0;
}

static int on_api(pini_file *f, policy *p, const pini_section *s)
{
    const char *const *v = s->value;
    p->api_line = s->line;
    p->name = xstrdup(v[PINI_NAME]);
    p->header = xstrdup(v[PINI_HEADER]);
    if (v[PINI_HEADERS]) split(&p->headers, v[PINI_HEADERS], ",");
    if (v[PINI_ABI_HEADERS]) split(&p->abi_headers, v[PINI_ABI_HEADERS], ",");
    split(&p->prefixes, v[PINI_PREFIX], ",");
    /* One soname or several (HIP: libamdhip64.so.5, .so.6, .so.7), kept as "a,b,c". */
    p->library = xstrdup(v[PINI_LIBRARY]);
    char *to = p->library;
    for (const char *c = p->library; *c; c++)
        if (*c != ' ' && *c != '\t') *to++ = *c;
    *to = '\0';
    p->result = xstrdup(v[PINI_RESULT]);
    p->success = xstrdup(v[PINI_SUCCESS]);
    p->missing = xstrdup(v[PINI_MISSING]);
    p->results = xstrdup(v[PINI_RESULTS]);
    p->errcode = xstrdup(v[PINI_ERRCODE]);
    p->real_prefix = xstrdup(v[PINI_REAL_PREFIX]);
    p->search = v[PINI_SEARCH] ? pini_word(PINI_SEARCH, v[PINI_SEARCH]) : 0;
    if (v[PINI_OUTPUTS]) split(&p->outputs, v[PINI_OUTPUTS], ",");
    if (v[PINI_CFLAGS]) split(&p->cflags, v[PINI_CFLAGS], " \t");
    if (v[PINI_STATES] && strcmp(v[PINI_STATES], "none") != 0) split(&p->states, v[PINI_STATES], ",");
    p->states_line = s->key_line[PINI_STATES];
    if (v[PINI_VARIANTS]) {
        split(&p->variants, v[PINI_VARIANTS], ",");
        p->variants_line = s->key_line[PINI_VARIANTS];
    }
    return v[PINI_PASSTHROUGH] ? read_passthrough(f, p, v[PINI_PASSTHROUGH], s->key_line[PINI_PASSTHROUGH]) : 0;
}

static int on_section(pini_file *f, const pini_section *s, void *user)
{
    policy *p = user;
    const char *const *v = s->value;
    if (s->kind == PINI_API) return on_api(f, p, s);
    if (s->kind == PINI_QUIRK)
        return pini_error(f, s->line, "[%s] is a quirk: quirks go in a quirks file (docs/quirks.md), not a policy file",
                          s->name);
    if (s->kind == PINI_DEFAULTS) {
        if (v[PINI_TRANSITION]) p->default_transition = pini_word(PINI_TRANSITION, v[PINI_TRANSITION]);
        if (v[PINI_COUNT]) p->default_uncounted = pini_word(PINI_COUNT, v[PINI_COUNT]) == 0;
        return 0;
    }
    p->sites = xrealloc(p->sites, (p->nsites + 1) * sizeof *p->sites);
    site_policy *sp = &p->sites[p->nsites++];
    memset(sp, 0, sizeof *sp);
    sp->name = xstrdup(s->name);
    sp->line = s->line;
    sp->transition = v[PINI_TRANSITION] ? pini_word(PINI_TRANSITION, v[PINI_TRANSITION]) : POLICY_UNSET;
    sp->blocking = v[PINI_BLOCKING] ? pini_word(PINI_BLOCKING, v[PINI_BLOCKING]) : POLICY_UNSET;
    sp->collective = v[PINI_COLLECTIVE] && pini_word(PINI_COLLECTIVE, v[PINI_COLLECTIVE]) == 1;
    sp->uncounted = v[PINI_COUNT] ? pini_word(PINI_COUNT, v[PINI_COUNT]) == 0 : POLICY_UNSET;
    sp->scope = v[PINI_SCOPE] ? pini_word(PINI_SCOPE, v[PINI_SCOPE]) : POLICY_UNSET;
    sp->reason = xstrdup(v[PINI_REASON]);
    sp->wait_args = xstrdup(v[PINI_WAIT_ARGS]);
    sp->wait_args_line = s->key_line[PINI_WAIT_ARGS];
    sp->serialize = v[PINI_SERIALIZE] && *v[PINI_SERIALIZE] ? xstrdup(v[PINI_SERIALIZE]) : NULL;
    sp->variant_of = xstrdup(v[PINI_VARIANT_OF]);
    sp->variant_line = s->key_line[PINI_VARIANT_OF];
    sp->wrapper = v[PINI_WRAPPER] ? pini_word(PINI_WRAPPER, v[PINI_WRAPPER]) : WRAPPER_GENERATED;
    sp->trace_args = v[PINI_TRACE_ARGS] ? pini_word(PINI_TRACE_ARGS, v[PINI_TRACE_ARGS]) : POLICY_UNSET;
    sp->states_line = s->key_line[PINI_STATES];
    if (v[PINI_STATES] && strcmp(v[PINI_STATES], "none") != 0) split(&sp->states, v[PINI_STATES], ",");
    for (int k = 0; k < NRULE_KEYS; k++) {
        sp->rules[k] = xstrdup(v[PINI_WRITES + k]);
        sp->rule_line[k] = s->key_line[PINI_WRITES + k];
    }
    return 0;
}

int policy_read(const char *path, policy *p)
{
    memset(p, 0, sizeof *p);
    p->path = path;
    p->default_transition = TRANSITION_ALWAYS;
    char err[1024];
    int rc = pini_read(path, on_section, p, err, sizeof err);
    if (rc == PINI_OK && !p->api_line) {
        snprintf(err, sizeof err, "%s:1: missing [api] section: it needs name, header, prefix and library", path);
        rc = PINI_EFORMAT;
    }
    if (rc != PINI_OK) fprintf(stderr, "%s%s\n", rc == PINI_EFORMAT ? "" : "callguard-gen: ", err);
    return rc != PINI_OK;
}

site_policy *policy_find_site(const policy *p, const char *name)
{
    for (size_t i = 0; i < p->nsites; i++)
        if (strcmp(p->sites[i].name, name) == 0) return &p->sites[i];
    return NULL;
}

void policy_free(policy *p)
{
    free(p->name);
    free(p->header);
    strlist_free(&p->headers);
    strlist_free(&p->abi_headers);
    strlist_free(&p->prefixes);
    free(p->library);
    free(p->result);
    free(p->success);
    free(p->missing);
    free(p->results);
    free(p->errcode);
    strlist_free(&p->outputs);
    free(p->real_prefix);
    strlist_free(&p->cflags);
    strlist_free(&p->passthrough);
    strlist_free(&p->variants);
    strlist_free(&p->states);
    for (size_t i = 0; i < p->nsites; i++) {
        strlist_free(&p->sites[i].states);
        free(p->sites[i].name);
        free(p->sites[i].reason);
        free(p->sites[i].wait_args);
        free(p->sites[i].serialize);
        free(p->sites[i].variant_of);
        for (int k = 0; k < NRULE_KEYS; k++)
            free(p->sites[i].rules[k]);
    }
    free(p->sites);
    memset(p, 0, sizeof *p);
}
