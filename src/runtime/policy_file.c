/* Policy files (CALLGUARD_POLICY, cg_policy_load): INI with [api] (keys for
 * the generator, checked and ignored here), [defaults] and one section per
 * entry point. What a file says becomes per-site settings (settings.h). */
#define _GNU_SOURCE
#include "policy_file.h"

#include "errors.h"
#include "settings.h"
#include "site.h"
#include "values.h"

#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>

typedef struct cgi_ini {
    const char *path;
    char msg[400];
    char last_section[CGI_NAME_MAX + 8];
    char seen[256][CGI_NAME_MAX + 24]; /* "section\0key" pairs and "[section" markers */
    int nseen;
    /* per-section values, flushed when the section changes */
    char section[CGI_NAME_MAX + 8];
    char transition[16], serialize[CGI_DOMAIN_NAME_MAX + 16], scope[16], blocking[8], reason[256];
    int have_transition, have_serialize, have_scope, have_blocking, have_reason;
    int section_line;
} cgi_ini;

static int cgi_ini_seen(cgi_ini *c, const char *a, const char *b)
{
    char key[CGI_NAME_MAX + 24];
    snprintf(key, sizeof key, "%s/%s", a, b);
    for (int i = 0; i < c->nseen; i++)
        if (strcmp(c->seen[i], key) == 0) return 1;
    if (c->nseen < 256) snprintf(c->seen[c->nseen++], sizeof c->seen[0], "%s", key);
    return 0;
}

static int cgi_ini_flush(cgi_ini *c)
{
    const char *sec = c->section;
    if (!*sec) return 1;
    if (strcmp(sec, "api") == 0) return 1; /* generation-time keys, checked below, used by callguard-gen */
    int is_default = strcmp(sec, "defaults") == 0;
    const char *site = is_default ? NULL : sec;
    char origin[600];
    snprintf(origin, sizeof origin, "%s: [%s]", c->path, sec);
    if (c->have_transition) {
        cg_transition t = CG_TRANSITION_ALWAYS;
        if (cgi_parse_transition(c->transition, &t) != CG_OK) {
            snprintf(c->msg, sizeof c->msg, "[%s] transition = %s: expected always, blocking or never", sec,
                     c->transition);
            return 0;
        }
        cgi_setting_add(CGI_SET_TRANSITION, site, origin)->transition = t;
    }
    int blocking = 0;
    if (c->have_blocking && cgi_parse_bool(c->blocking, &blocking) != CG_OK) {
        snprintf(c->msg, sizeof c->msg, "[%s] blocking = %s: expected yes or no", sec, c->blocking);
        return 0;
    }
    if (blocking && !c->have_reason) {
        snprintf(c->msg, sizeof c->msg, "[%s] blocking = yes needs a reason = line saying why", sec);
        return 0;
    }
    if (c->have_blocking) {
        cgi_setting *st = cgi_setting_add(CGI_SET_BLOCKING, site, origin);
        st->blocking = blocking;
        st->reason = strdup(c->reason);
    }
    cg_scope scope = CG_SCOPE_PROCESS;
    if (c->have_scope && cgi_parse_scope(c->scope, &scope) != CG_OK) {
        snprintf(c->msg, sizeof c->msg, "[%s] scope = %s: expected process or handle", sec, c->scope);
        return 0;
    }
    if (c->have_scope && !c->have_serialize) {
        snprintf(c->msg, sizeof c->msg, "[%s] scope needs serialize = DOMAIN", sec);
        return 0;
    }
    if (c->have_serialize) {
        cgi_setting *st = cgi_setting_add(CGI_SET_SERIALIZE, site, origin);
        st->domain = strdup(c->serialize);
        st->scope = scope;
    }
    return 1;
}

static int cgi_ini_handler(void *user, const char *section, const char *name, const char *value)
{
    cgi_ini *c = user;
    if (strcmp(section, c->section) != 0) {
        if (!cgi_ini_flush(c)) return 0;
        if (cgi_ini_seen(c, "[", section)) {
            snprintf(c->msg, sizeof c->msg, "section [%s] appears twice", section);
            return 0;
        }
        snprintf(c->section, sizeof c->section, "%s", section);
        c->have_transition = c->have_serialize = c->have_scope = c->have_blocking = c->have_reason = 0;
        c->reason[0] = '\0';
        if (strcmp(section, "api") != 0 && strcmp(section, "defaults") != 0 && !cgi_valid_site_name(section)) {
            snprintf(c->msg, sizeof c->msg, "section [%s]: expected [api], [defaults] or an entry point name", section);
            return 0;
        }
    }
    if (cgi_ini_seen(c, section, name)) {
        snprintf(c->msg, sizeof c->msg, "[%s] %s is given twice", section, name);
        return 0;
    }
    if (strcmp(section, "api") == 0) {
        static const char *const api_keys[] = {"name", "header", "headers", "prefix", "library", "result",
                                               "success", "missing", "results", "cflags"};
        for (size_t i = 0; i < sizeof api_keys / sizeof *api_keys; i++)
            if (strcmp(name, api_keys[i]) == 0) return 1;
        snprintf(c->msg, sizeof c->msg, "[api] unknown key '%s'", name);
        return 0;
    }
    int is_default = strcmp(section, "defaults") == 0;
    /* Values are checked here, where libinih still knows the line. */
    int ok = 1;
    if (strcmp(name, "transition") == 0) {
        cg_transition t;
        ok = cgi_parse_transition(value, &t) == CG_OK;
    } else if (!is_default && strcmp(name, "scope") == 0) {
        cg_scope sc;
        ok = cgi_parse_scope(value, &sc) == CG_OK;
    } else if (!is_default && strcmp(name, "blocking") == 0) {
        int b;
        ok = cgi_parse_bool(value, &b) == CG_OK;
    }
    if (!ok) {
        snprintf(c->msg, sizeof c->msg, "[%s] %s = %s: %s", section, name, value, strchr(cg_last_error(), ':') + 2);
        return 0;
    }
#define CGI_KEY(field)                                                                                                \
    if (strcmp(name, #field) == 0) {                                                                                 \
        if (strlen(value) >= sizeof c->field) {                                                                      \
            snprintf(c->msg, sizeof c->msg, "[%s] %s: value too long", section, name);                               \
            return 0;                                                                                                \
        }                                                                                                            \
        strcpy(c->field, value);                                                                                     \
        c->have_##field = 1;                                                                                         \
        return 1;                                                                                                    \
    }
    CGI_KEY(transition)
    if (!is_default) {
        CGI_KEY(serialize)
        CGI_KEY(scope)
        CGI_KEY(blocking)
        CGI_KEY(reason)
        if (strcmp(name, "variant_of") == 0) return 1;
    }
#undef CGI_KEY
    snprintf(c->msg, sizeof c->msg, "[%s] unknown key '%s': expected %s", section, name,
             is_default ? "transition" : "transition, serialize, scope, blocking, reason or variant_of");
    return 0;
}

int cgi_policy_load_locked(const char *path, int from_env)
{
    if (!path || !*path) return cgi_fail(CG_EINVAL, "policy file name is empty");
    FILE *f = fopen(path, "r");
    if (!f) return cgi_fail(CG_EIO, "cannot read policy file %s: %s", path, strerror(errno));
    cgi_ini *c = calloc(1, sizeof *c);
    if (!c) {
        fclose(f);
        return cgi_fail(CG_ENOMEM, "out of memory");
    }
    c->path = path;
    cgi_setting **before = cgi_settings_mark();
    int line = ini_parse_file(f, cgi_ini_handler, c);
    fclose(f);
    if (line == 0 && !cgi_ini_flush(c)) line = -3;
    int rc = CG_OK;
    if (line > 0)
        rc = cgi_fail(CG_EFORMAT, "%s:%d: %s", path, line, c->msg[0] ? c->msg : "syntax error: expected [section] or key = value");
    else if (line == -3)
        rc = cgi_fail(CG_EFORMAT, "%s: %s", path, c->msg);
    else if (line != 0)
        rc = cgi_fail(CG_EIO, "cannot read policy file %s", path);
    free(c);
    if (rc != CG_OK) {
        /* Drop what this file added: a bad file changes nothing. */
        cgi_settings_drop_from(before);
        return rc;
    }
    if (!from_env)
        for (cg_layer *l = cgi_layers; l; l = l->next) {
            for (cgi_setting *st = *before; st; st = st->next) {
                if (st->site && cgi_layer_for_name(st->site) != l) continue;
                rc = cgi_setting_apply(st, l);
                if (rc == CG_ENOENT) return cgi_fail(rc, "%s: unknown entry point '%s'", st->origin, st->site);
                if (rc != CG_OK) return rc;
            }
            cgi_refresh_all();
        }
    return CG_OK;
}
