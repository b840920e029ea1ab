/* Policy files (CALLGUARD_POLICY, cg_policy_load): INI with [api] (keys for
 * the generator, checked and ignored here), [defaults] and one section per
 * entry point, read and checked by the reader callguard-gen shares
 * (src/policy/policy_ini.c). What a file says becomes per-site settings
 * (settings.h). */
#define _GNU_SOURCE
#include "policy_file.h"

#include "../common/errors.h"
#include "settings.h"
#include "site.h"
#include "values.h"

#include "../policy/policy_ini.h"

#include <stdlib.h>
#include <string.h>

/* One section's settings. [api] says how the layer was generated: nothing
 * for the runtime (the reader has refused entry point sections without its
 * prefixes). variant_of and wrapper are the generator's too. */
/* states = A, B (or none) as the setting keeps it: "A,B" (or ""). */
static char *cgi_states_text(const char *v)
{
    if (strcmp(v, "none") == 0) return strdup("");
    char *out = malloc(strlen(v) + 1), *o = out;
    if (!out) return NULL;
    for (const char *c = v; *c; c++)
        if (*c != ' ' && *c != '\t') *o++ = *c;
    *o = '\0';
    return out;
}

static int cgi_policy_states(const pini_section *s, const char *site, const char *api, const char *file)
{
    char origin[600];
    snprintf(origin, sizeof origin, "%s:%d: [%s]", file, s->key_line[PINI_STATES], s->name);
    cgi_setting *st = cgi_setting_add(CGI_SET_STATES, site, origin);
    st->states = cgi_states_text(s->value[PINI_STATES]);
    st->api = api ? strdup(api) : NULL;
    return st->states ? 0 : 1;
}

static int cgi_policy_section(pini_file *f, const pini_section *s, void *user)
{
    if (s->kind == PINI_API) {
        /* pini_read's strings do not outlive it. */
        char **api = user;
        free(*api);
        if (s->value[PINI_NAME] && !(*api = strdup(s->value[PINI_NAME]))) cgi_die("out of memory");
        /* The rest of [api] says how the layer was generated; only its
         * states are also the runtime's: they replace every site's. */
        return s->value[PINI_STATES] ? cgi_policy_states(s, NULL, s->value[PINI_NAME], pini_path(f)) : 0;
    }
    if (s->kind == PINI_QUIRK)
        return pini_error(f, s->line,
                          "[%s] is a quirk: quirks go in a quirks file (CALLGUARD_QUIRKS, docs/quirks.md), "
                          "not a policy file",
                          s->name);
    const char *const *v = s->value;
    const char *site = s->kind == PINI_SITE ? s->name : NULL;
    if (site && !cgi_valid_site_name(site))
        return pini_error(f, s->line, "[%s]: an entry point name is shorter than %d characters", site, CGI_NAME_MAX);
    char origin[600];
    snprintf(origin, sizeof origin, "%s:%d: [%s]", pini_path(f), s->line, s->name);
    if (v[PINI_TRANSITION])
        cgi_setting_add(CGI_SET_TRANSITION, site, origin)->transition =
            (cg_transition)pini_word(PINI_TRANSITION, v[PINI_TRANSITION]);
    if (v[PINI_COUNT]) cgi_setting_add(CGI_SET_COUNT, site, origin)->count = pini_word(PINI_COUNT, v[PINI_COUNT]);
    if (v[PINI_BLOCKING]) {
        cgi_setting *st = cgi_setting_add(CGI_SET_BLOCKING, site, origin);
        st->blocking = pini_word(PINI_BLOCKING, v[PINI_BLOCKING]);
        st->reason = v[PINI_REASON] ? strdup(v[PINI_REASON]) : NULL;
    }
    if (v[PINI_SERIALIZE]) {
        if (strlen(v[PINI_SERIALIZE]) >= CGI_DOMAIN_NAME_MAX)
            return pini_error(f, s->key_line[PINI_SERIALIZE],
                              "serialize = %s: a domain name is shorter than %d characters", v[PINI_SERIALIZE],
                              CGI_DOMAIN_NAME_MAX);
        cgi_setting *st = cgi_setting_add(CGI_SET_SERIALIZE, site, origin);
        st->domain = strdup(v[PINI_SERIALIZE]);
        st->scope = v[PINI_SCOPE] ? (cg_scope)pini_word(PINI_SCOPE, v[PINI_SCOPE]) : CG_SCOPE_PROCESS;
    }
    if (v[PINI_STATES] && site && cgi_policy_states(s, site, NULL, pini_path(f)))
        return pini_error(f, s->key_line[PINI_STATES], "out of memory");
    /* Thread rules are compiled into the layer: a file may repeat them, checked when the site is loaded. */
    int rules = 0;
    for (int k = 0; k < CGI_RULE_KEYS; k++)
        rules |= v[PINI_WRITES + k] != NULL;
    if (site && rules) {
        cgi_setting *st = cgi_setting_add(CGI_SET_RULES, site, origin);
        for (int k = 0; k < CGI_RULE_KEYS; k++)
            if (v[PINI_WRITES + k] && !(st->rules[k] = strdup(v[PINI_WRITES + k]))) cgi_die("out of memory");
    }
    return 0;
}

int cgi_policy_load_locked(const char *path, int from_env)
{
    if (!path || !*path) return cgi_fail(CG_EINVAL, "policy file name is empty");
    cgi_setting **before = cgi_settings_mark();
    char err[512];
    char *api = NULL; /* the file's [api] name: its [defaults] are that layer's */
    int rc = pini_read(path, cgi_policy_section, &api, err, sizeof err);
    if (rc != PINI_OK) {
        /* Drop what this file added: a bad file changes nothing. */
        cgi_settings_drop_from(before);
        free(api);
        return cgi_fail(rc == PINI_EIO ? CG_EIO : rc == PINI_ENOMEM ? CG_ENOMEM : CG_EFORMAT, "%s", err);
    }
    /* A file without [api] sets the defaults of every layer. */
    for (cgi_setting *st = *before; st && api; st = st->next)
        if (!st->site && !st->api && !(st->api = strdup(api))) cgi_die("out of memory");
    free(api);
    if (from_env) {
        cgi_settings_keep(before);
        return CG_OK;
    }
    return cgi_settings_commit(before);
}
