/* Configuration: the CALLGUARD_* environment, a policy file named by
 * CALLGUARD_POLICY, and the C API. Later sources win: generated defaults,
 * then the policy file, then the environment, then the C API.
 *
 * Per-site settings from the file and the environment are kept as a list
 * and applied to each layer when it registers (layers register from their
 * constructors, after libcallguard's, possibly much later via dlopen). A bad
 * value in the environment or the policy file is reported in one line on
 * stderr and the process exits with status 2 before any guarded call. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

cg_config cg_cfg = {.stall_ns = 50u * 1000000u};
pthread_mutex_t cg_cfg_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* ---- errors -------------------------------------------------------------- */

static __thread char cg_err[512];

int cg_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cg_err, sizeof cg_err, fmt, ap);
    va_end(ap);
    return status;
}

const char *cg_last_error(void) { return cg_err; }

const char *cg_status_name(int status)
{
    switch (status) {
    case CG_OK: return "CG_OK";
    case CG_EINVAL: return "CG_EINVAL";
    case CG_ENOENT: return "CG_ENOENT";
    case CG_EIO: return "CG_EIO";
    case CG_ENOMEM: return "CG_ENOMEM";
    case CG_EFORMAT: return "CG_EFORMAT";
    default: return "unknown status";
    }
}

static void cg_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void cg_die(const char *fmt, ...)
{
    char line[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "callguard: %s\n", line);
    _exit(2);
}

/* ---- values -------------------------------------------------------------- */

static const char *const cg_transition_names[] = {"always", "blocking", "never"};

const char *cg_transition_name(unsigned t) { return t < 3 ? cg_transition_names[t] : "?"; }

int cg_parse_transition(const char *v, cg_transition *out)
{
    for (unsigned i = 0; i < 3; i++)
        if (strcmp(v, cg_transition_names[i]) == 0) {
            *out = (cg_transition)i;
            return CG_OK;
        }
    return cg_fail(CG_EINVAL, "transition '%s': expected always, blocking or never", v);
}

static int cg_parse_scope(const char *v, cg_scope *out)
{
    if (strcmp(v, "process") == 0) *out = CG_SCOPE_PROCESS;
    else if (strcmp(v, "handle") == 0) *out = CG_SCOPE_HANDLE;
    else return cg_fail(CG_EINVAL, "scope '%s': expected process or handle", v);
    return CG_OK;
}

static int cg_parse_bool(const char *v, int *out)
{
    if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0 || strcmp(v, "1") == 0) *out = 1;
    else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0 || strcmp(v, "0") == 0) *out = 0;
    else return cg_fail(CG_EINVAL, "'%s': expected yes or no", v);
    return CG_OK;
}

static int cg_parse_ms(const char *v, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    if (!*v || *end || errno || n < 1 || n > 3600000 || v[0] == '-' || v[0] == '+')
        return cg_fail(CG_EINVAL, "'%s': expected a whole number of milliseconds from 1 to 3600000", v);
    *out = (uint32_t)n;
    return CG_OK;
}

static int cg_valid_site_name(const char *s)
{
    if (!*s || strlen(s) >= CG_NAME_MAX) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

/* ---- pending per-site settings --------------------------------------------- */

enum { CG_SET_TRANSITION, CG_SET_SERIALIZE, CG_SET_BLOCKING };

typedef struct cg_setting {
    int kind;
    char *site; /* NULL: every site */
    cg_transition transition;
    char *domain; /* NULL: not serialized */
    cg_scope scope;
    int blocking;
    char *reason;
    char *origin; /* "CALLGUARD_SERIALIZE" or "policy.ini:12" */
    struct cg_setting *next;
} cg_setting;

static cg_setting *cg_settings, **cg_settings_tail = &cg_settings;

static cg_setting *cg_setting_add(int kind, const char *site, const char *origin)
{
    cg_setting *s = calloc(1, sizeof *s);
    if (!s) cg_die("out of memory");
    s->kind = kind;
    s->site = site ? strdup(site) : NULL;
    s->origin = strdup(origin);
    *cg_settings_tail = s;
    cg_settings_tail = &s->next;
    return s;
}

static void cg_apply_transition(cg_site *s, void *arg) { atomic_store(&s->transition, *(cg_transition *)arg); }

typedef struct cg_ser_arg {
    uint32_t domain;
    cg_scope scope;
} cg_ser_arg;

static void cg_apply_serialize(cg_site *s, void *arg)
{
    cg_ser_arg *a = arg;
    atomic_store(&s->scope, a->scope);
    atomic_store(&s->domain, a->domain);
}

typedef struct cg_block_arg {
    int blocking;
    const char *reason;
} cg_block_arg;

static void cg_apply_blocking(cg_site *s, void *arg)
{
    cg_block_arg *a = arg;
    s->reason = a->reason;
    atomic_store(&s->blocking, a->blocking);
}

/* Caller holds cg_cfg_lock. */
static int cg_set_serialize_locked(const char *site, const char *domain, cg_scope scope)
{
    cg_ser_arg a = {0, scope};
    if (domain && *domain) {
        int rc = cg_domain_get(domain, scope, &a.domain);
        if (rc != CG_OK) return rc;
    }
    return cg_site_each(site, cg_apply_serialize, &a);
}

static int cg_setting_apply(const cg_setting *st, cg_layer *layer)
{
    if (!st->site) {
        /* Every site of this layer. */
        for (unsigned i = 0; i < layer->nsites; i++)
            if (st->kind == CG_SET_TRANSITION) atomic_store(&layer->sites[i].transition, st->transition);
        return CG_OK;
    }
    switch (st->kind) {
    case CG_SET_TRANSITION: {
        cg_transition t = st->transition;
        return cg_site_each(st->site, cg_apply_transition, &t);
    }
    case CG_SET_SERIALIZE: return cg_set_serialize_locked(st->site, st->domain, st->scope);
    default: {
        cg_block_arg a = {st->blocking, st->reason};
        return cg_site_each(st->site, cg_apply_blocking, &a);
    }
    }
}

/* Applies every setting that names a site of `layer` (or all sites).
 * A name with the layer's prefix that the layer does not have is an error:
 * a typo must not silently leave a site unguarded. Caller holds cg_cfg_lock. */
void cg_env_apply_pending(cg_layer *layer)
{
    for (cg_setting *st = cg_settings; st; st = st->next) {
        if (st->site && cg_layer_for_name(st->site) != layer) continue;
        int rc = cg_setting_apply(st, layer);
        if (rc == CG_ENOENT)
            cg_die("%s: unknown entry point '%s' (the %s layer has no such function; `callguard list %s` lists them)",
                   st->origin, st->site, layer->api, layer->api);
        if (rc != CG_OK) cg_die("%s: %s", st->origin, cg_last_error());
    }
    for (unsigned i = 0; i < layer->nsites; i++) cg_stats_note_policy(&layer->sites[i]);
}

/* ---- the environment ----------------------------------------------------- */

/* FN[=DOMAIN][:process|:handle][,...] */
static int cg_parse_serialize_list(const char *value, const char *origin)
{
    char *copy = strdup(value), *save = NULL;
    if (!copy) return cg_fail(CG_ENOMEM, "out of memory");
    int rc = CG_OK;
    if (!*value) rc = cg_fail(CG_EINVAL, "empty value: expected FN[=DOMAIN][:process|:handle][,...]");
    for (char *item = strtok_r(copy, ",", &save); item && rc == CG_OK; item = strtok_r(NULL, ",", &save)) {
        cg_scope scope = CG_SCOPE_PROCESS;
        char *colon = strchr(item, ':');
        if (colon) {
            *colon = '\0';
            if (cg_parse_scope(colon + 1, &scope) != CG_OK) {
                rc = cg_fail(CG_EINVAL, "'%s': scope '%s': expected process or handle", value, colon + 1);
                break;
            }
        }
        char *eq = strchr(item, '=');
        const char *domain = item;
        if (eq) {
            *eq = '\0';
            domain = eq + 1;
        }
        if (!cg_valid_site_name(item)) {
            rc = cg_fail(CG_EINVAL, "'%s': '%s' is not an entry point name: expected FN[=DOMAIN][:process|:handle][,...]",
                         value, item);
            break;
        }
        cg_setting *st = cg_setting_add(CG_SET_SERIALIZE, item, origin);
        st->domain = strdup(domain);
        st->scope = scope;
        if (!*domain) rc = cg_fail(CG_EINVAL, "'%s': empty domain name after '%s='", value, item);
    }
    free(copy);
    return rc;
}

static int cg_runtime_set_locked(const char *v)
{
    if (strcmp(v, "none") == 0) {
        atomic_store(&cg_cfg.adapter, NULL);
    } else if (strcmp(v, "auto") == 0) {
        atomic_store(&cg_cfg.adapter_mode, CG_ADAPTER_DETECT);
        atomic_store(&cg_cfg.adapter, cg_cpython_adapter_if_present());
    } else if (strcmp(v, "cpython") == 0) {
        atomic_store(&cg_cfg.adapter_mode, CG_ADAPTER_ACTIVE);
        atomic_store(&cg_cfg.adapter, cg_adapter_cpython());
    } else {
        return cg_fail(CG_EINVAL, "runtime '%s': expected auto, none or cpython", v);
    }
    cg_refresh_all();
    return CG_OK;
}

static char *cg_report_path;

static void cg_report_at_exit(void)
{
    if (!cg_report_path) return;
    int text = strcmp(cg_report_path, "-") == 0;
    if (cg_report_write(cg_report_path, text ? CG_REPORT_TEXT : CG_REPORT_JSON) != CG_OK)
        fprintf(stderr, "callguard: %s\n", cg_last_error());
}

/* glibc's on_exit hands its handlers the exit status: recorded, a report
 * can say how a process ended even when its own parent reaped it. */
static void cg_note_exit(int status, void *arg)
{
    (void)arg;
    cg_stats->h.status = status;
    atomic_store(&cg_stats->h.state, CG_PROC_EXITED);
}

static const char *const cg_apis[] = {"TOY", "CL", "ZE", "CUDA"};

static int cg_library_var(const char *name)
{
    for (size_t i = 0; i < sizeof cg_apis / sizeof *cg_apis; i++) {
        size_t n = strlen(cg_apis[i]);
        if (strncmp(name, cg_apis[i], n) == 0 && strcmp(name + n, "_LIBRARY") == 0) return 1;
    }
    return 0;
}

static int cg_policy_load_locked(const char *path, int from_env);

/* Applies one CALLGUARD_* variable. Per-site ones are recorded and applied
 * to layers already registered and to those that register later. */
static int cg_configure_locked(const char *var, const char *v, int from_env)
{
    if (strncmp(var, "CALLGUARD_", 10) != 0)
        return cg_fail(CG_EINVAL, "'%s' is not a callguard setting (expected CALLGUARD_...)", var);
    const char *k = var + 10;
    int rc = CG_OK;
    if (strcmp(k, "SERIALIZE") == 0) {
        cg_setting **before = cg_settings_tail;
        rc = cg_parse_serialize_list(v, var);
        if (rc == CG_OK && !from_env)
            for (cg_setting *st = *before; st && rc == CG_OK; st = st->next)
                rc = cg_set_serialize_locked(st->site, st->domain, st->scope);
    } else if (strcmp(k, "TRANSITION") == 0) {
        cg_transition t = CG_TRANSITION_ALWAYS;
        rc = cg_parse_transition(v, &t);
        if (rc == CG_OK) {
            cg_setting *st = cg_setting_add(CG_SET_TRANSITION, NULL, var);
            st->transition = t;
            for (cg_layer *l = cg_layers; l; l = l->next) cg_setting_apply(st, l);
            cg_refresh_all();
        }
    } else if (strcmp(k, "RUNTIME") == 0) {
        rc = cg_runtime_set_locked(v);
    } else if (strcmp(k, "REPORT") == 0) {
        if (!*v) return cg_fail(CG_EINVAL, "empty value: expected a file name for a JSON report, or '-' for a table on stderr");
        free(cg_report_path);
        cg_report_path = strdup(v);
        atomic_store(&cg_cfg.stats_on, 1);
        cg_refresh_all();
    } else if (strcmp(k, "TRACE") == 0) {
        FILE *f = strcmp(v, "-") == 0 ? stderr : (*v ? fopen(v, "a") : NULL);
        if (!f) return cg_fail(CG_EINVAL, "'%s': cannot open for writing: %s", v, *v ? strerror(errno) : "empty name");
        setvbuf(f, NULL, _IOLBF, 0);
        atomic_store(&cg_cfg.trace, f);
        atomic_store(&cg_cfg.stats_on, 1);
        cg_refresh_all();
    } else if (strcmp(k, "STALL_MS") == 0) {
        uint32_t ms = 0;
        rc = cg_parse_ms(v, &ms);
        if (rc == CG_OK) atomic_store(&cg_cfg.stall_ns, (uint64_t)ms * 1000000u);
    } else if (strcmp(k, "POLICY") == 0) {
        rc = cg_policy_load_locked(v, from_env);
    } else if (strcmp(k, "STATS_DIR") == 0) {
        if (!from_env) return cg_fail(CG_EINVAL, "CALLGUARD_STATS_DIR can only be set in the environment");
        /* handled by cg_init before anything else */
    } else if (cg_library_var(k)) {
        if (v[0] != '/' || access(v, R_OK) != 0)
            return cg_fail(CG_EINVAL, "'%s': expected the absolute path of a readable library%s%s", v,
                           v[0] == '/' ? ": " : "", v[0] == '/' ? strerror(errno) : "");
    } else {
        return cg_fail(CG_EINVAL,
                       "unknown setting; expected one of CALLGUARD_SERIALIZE, _TRANSITION, _RUNTIME, _REPORT, _TRACE, "
                       "_STALL_MS, _POLICY, _TOY_LIBRARY, _CL_LIBRARY, _ZE_LIBRARY, _CUDA_LIBRARY");
    }
    return rc;
}

int cg_configure(const char *var, const char *value)
{
    if (!var || !value) return cg_fail(CG_EINVAL, "cg_configure: variable and value must not be NULL");
    pthread_mutex_lock(&cg_cfg_lock);
    int rc = cg_configure_locked(var, value, 0);
    pthread_mutex_unlock(&cg_cfg_lock);
    if (rc != CG_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", cg_last_error());
        cg_fail(rc, "%s=%s: %s", var, value, msg);
    }
    return rc;
}

/* ---- the policy file ----------------------------------------------------- */

typedef struct cg_ini {
    const char *path;
    char msg[400];
    char last_section[CG_NAME_MAX + 8];
    char seen[256][CG_NAME_MAX + 24]; /* "section\0key" pairs and "[section" markers */
    int nseen;
    /* per-section values, flushed when the section changes */
    char section[CG_NAME_MAX + 8];
    char transition[16], serialize[CG_DOMAIN_NAME_MAX + 16], scope[16], blocking[8], reason[256];
    int have_transition, have_serialize, have_scope, have_blocking, have_reason;
    int section_line;
} cg_ini;

static int cg_ini_seen(cg_ini *c, const char *a, const char *b)
{
    char key[CG_NAME_MAX + 24];
    snprintf(key, sizeof key, "%s/%s", a, b);
    for (int i = 0; i < c->nseen; i++)
        if (strcmp(c->seen[i], key) == 0) return 1;
    if (c->nseen < 256) snprintf(c->seen[c->nseen++], sizeof c->seen[0], "%s", key);
    return 0;
}

static int cg_ini_flush(cg_ini *c)
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
        if (cg_parse_transition(c->transition, &t) != CG_OK) {
            snprintf(c->msg, sizeof c->msg, "[%s] transition = %s: expected always, blocking or never", sec,
                     c->transition);
            return 0;
        }
        cg_setting_add(CG_SET_TRANSITION, site, origin)->transition = t;
    }
    int blocking = 0;
    if (c->have_blocking && cg_parse_bool(c->blocking, &blocking) != CG_OK) {
        snprintf(c->msg, sizeof c->msg, "[%s] blocking = %s: expected yes or no", sec, c->blocking);
        return 0;
    }
    if (blocking && !c->have_reason) {
        snprintf(c->msg, sizeof c->msg, "[%s] blocking = yes needs a reason = line saying why", sec);
        return 0;
    }
    if (c->have_blocking) {
        cg_setting *st = cg_setting_add(CG_SET_BLOCKING, site, origin);
        st->blocking = blocking;
        st->reason = strdup(c->reason);
    }
    cg_scope scope = CG_SCOPE_PROCESS;
    if (c->have_scope && cg_parse_scope(c->scope, &scope) != CG_OK) {
        snprintf(c->msg, sizeof c->msg, "[%s] scope = %s: expected process or handle", sec, c->scope);
        return 0;
    }
    if (c->have_scope && !c->have_serialize) {
        snprintf(c->msg, sizeof c->msg, "[%s] scope needs serialize = DOMAIN", sec);
        return 0;
    }
    if (c->have_serialize) {
        cg_setting *st = cg_setting_add(CG_SET_SERIALIZE, site, origin);
        st->domain = strdup(c->serialize);
        st->scope = scope;
    }
    return 1;
}

static int cg_ini_handler(void *user, const char *section, const char *name, const char *value)
{
    cg_ini *c = user;
    if (strcmp(section, c->section) != 0) {
        if (!cg_ini_flush(c)) return 0;
        if (cg_ini_seen(c, "[", section)) {
            snprintf(c->msg, sizeof c->msg, "section [%s] appears twice", section);
            return 0;
        }
        snprintf(c->section, sizeof c->section, "%s", section);
        c->have_transition = c->have_serialize = c->have_scope = c->have_blocking = c->have_reason = 0;
        c->reason[0] = '\0';
        if (strcmp(section, "api") != 0 && strcmp(section, "defaults") != 0 && !cg_valid_site_name(section)) {
            snprintf(c->msg, sizeof c->msg, "section [%s]: expected [api], [defaults] or an entry point name", section);
            return 0;
        }
    }
    if (cg_ini_seen(c, section, name)) {
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
        ok = cg_parse_transition(value, &t) == CG_OK;
    } else if (!is_default && strcmp(name, "scope") == 0) {
        cg_scope sc;
        ok = cg_parse_scope(value, &sc) == CG_OK;
    } else if (!is_default && strcmp(name, "blocking") == 0) {
        int b;
        ok = cg_parse_bool(value, &b) == CG_OK;
    }
    if (!ok) {
        snprintf(c->msg, sizeof c->msg, "[%s] %s = %s: %s", section, name, value, strchr(cg_last_error(), ':') + 2);
        return 0;
    }
#define CG_KEY(field)                                                                                                \
    if (strcmp(name, #field) == 0) {                                                                                 \
        if (strlen(value) >= sizeof c->field) {                                                                      \
            snprintf(c->msg, sizeof c->msg, "[%s] %s: value too long", section, name);                               \
            return 0;                                                                                                \
        }                                                                                                            \
        strcpy(c->field, value);                                                                                     \
        c->have_##field = 1;                                                                                         \
        return 1;                                                                                                    \
    }
    CG_KEY(transition)
    if (!is_default) {
        CG_KEY(serialize)
        CG_KEY(scope)
        CG_KEY(blocking)
        CG_KEY(reason)
        if (strcmp(name, "variant_of") == 0) return 1;
    }
#undef CG_KEY
    snprintf(c->msg, sizeof c->msg, "[%s] unknown key '%s': expected %s", section, name,
             is_default ? "transition" : "transition, serialize, scope, blocking, reason or variant_of");
    return 0;
}

static int cg_policy_load_locked(const char *path, int from_env)
{
    if (!path || !*path) return cg_fail(CG_EINVAL, "policy file name is empty");
    FILE *f = fopen(path, "r");
    if (!f) return cg_fail(CG_EIO, "cannot read policy file %s: %s", path, strerror(errno));
    cg_ini *c = calloc(1, sizeof *c);
    if (!c) {
        fclose(f);
        return cg_fail(CG_ENOMEM, "out of memory");
    }
    c->path = path;
    cg_setting **before = cg_settings_tail;
    int line = ini_parse_file(f, cg_ini_handler, c);
    fclose(f);
    if (line == 0 && !cg_ini_flush(c)) line = -3;
    int rc = CG_OK;
    if (line > 0)
        rc = cg_fail(CG_EFORMAT, "%s:%d: %s", path, line, c->msg[0] ? c->msg : "syntax error: expected [section] or key = value");
    else if (line == -3)
        rc = cg_fail(CG_EFORMAT, "%s: %s", path, c->msg);
    else if (line != 0)
        rc = cg_fail(CG_EIO, "cannot read policy file %s", path);
    free(c);
    if (rc != CG_OK) {
        /* Drop what this file added: a bad file changes nothing. */
        cg_setting *st = *before;
        *before = NULL;
        cg_settings_tail = before;
        while (st) {
            cg_setting *n = st->next;
            free(st->site), free(st->domain), free(st->reason), free(st->origin), free(st);
            st = n;
        }
        return rc;
    }
    if (!from_env)
        for (cg_layer *l = cg_layers; l; l = l->next) {
            for (cg_setting *st = *before; st; st = st->next) {
                if (st->site && cg_layer_for_name(st->site) != l) continue;
                rc = cg_setting_apply(st, l);
                if (rc == CG_ENOENT) return cg_fail(rc, "%s: unknown entry point '%s'", st->origin, st->site);
                if (rc != CG_OK) return rc;
            }
            cg_refresh_all();
        }
    return CG_OK;
}

int cg_policy_load(const char *path)
{
    pthread_mutex_lock(&cg_cfg_lock);
    int rc = cg_policy_load_locked(path, 0);
    pthread_mutex_unlock(&cg_cfg_lock);
    return rc;
}

/* ---- the C API ------------------------------------------------------------- */

int cg_serialize(const char *site, const char *domain, cg_scope scope)
{
    if (!site) return cg_fail(CG_EINVAL, "cg_serialize: site must not be NULL");
    if (scope != CG_SCOPE_PROCESS && scope != CG_SCOPE_HANDLE)
        return cg_fail(CG_EINVAL, "scope %d: expected CG_SCOPE_PROCESS or CG_SCOPE_HANDLE", (int)scope);
    pthread_mutex_lock(&cg_cfg_lock);
    int rc = cg_set_serialize_locked(site, domain, scope);
    pthread_mutex_unlock(&cg_cfg_lock);
    return rc;
}

int cg_set_transition(const char *site, cg_transition t)
{
    if ((unsigned)t > CG_TRANSITION_NEVER)
        return cg_fail(CG_EINVAL, "transition %d: expected CG_TRANSITION_ALWAYS, _BLOCKING or _NEVER", (int)t);
    pthread_mutex_lock(&cg_cfg_lock);
    int rc = CG_OK;
    if (site) {
        rc = cg_site_each(site, cg_apply_transition, &t);
    } else {
        for (cg_layer *l = cg_layers; l; l = l->next)
            for (unsigned i = 0; i < l->nsites; i++) atomic_store(&l->sites[i].transition, t);
        cg_refresh_all();
    }
    pthread_mutex_unlock(&cg_cfg_lock);
    return rc;
}

int cg_set_blocking(const char *site, int blocking, const char *reason)
{
    if (!site) return cg_fail(CG_EINVAL, "cg_set_blocking: site must not be NULL");
    if (blocking && (!reason || !*reason)) return cg_fail(CG_EINVAL, "%s: blocking needs a reason", site);
    pthread_mutex_lock(&cg_cfg_lock);
    cg_block_arg a = {blocking != 0, blocking ? strdup(reason) : NULL};
    int rc = cg_site_each(site, cg_apply_blocking, &a);
    pthread_mutex_unlock(&cg_cfg_lock);
    return rc;
}

int cg_set_adapter(const cg_adapter *adapter, cg_adapter_mode mode)
{
    if (mode != CG_ADAPTER_DETECT && mode != CG_ADAPTER_ACTIVE)
        return cg_fail(CG_EINVAL, "adapter mode %d: expected CG_ADAPTER_DETECT or CG_ADAPTER_ACTIVE", (int)mode);
    if (adapter && (!adapter->holds || !adapter->call_outside || !adapter->name))
        return cg_fail(CG_EINVAL, "adapter needs a name, holds and call_outside");
    pthread_mutex_lock(&cg_cfg_lock);
    atomic_store(&cg_cfg.adapter_mode, mode);
    atomic_store(&cg_cfg.adapter, adapter);
    cg_refresh_all();
    pthread_mutex_unlock(&cg_cfg_lock);
    return CG_OK;
}

int cg_set_runtime(const char *name)
{
    if (!name) return cg_fail(CG_EINVAL, "runtime NULL: expected auto, none or cpython");
    pthread_mutex_lock(&cg_cfg_lock);
    int rc = cg_runtime_set_locked(name);
    pthread_mutex_unlock(&cg_cfg_lock);
    return rc;
}

int cg_stats_enable(int on)
{
    pthread_mutex_lock(&cg_cfg_lock);
    atomic_store(&cg_cfg.stats_on, on != 0);
    cg_refresh_all();
    pthread_mutex_unlock(&cg_cfg_lock);
    return CG_OK;
}

int cg_set_stall_ms(uint32_t ms)
{
    if (ms < 1 || ms > 3600000) return cg_fail(CG_EINVAL, "stall limit %u ms: expected 1 to 3600000", ms);
    atomic_store(&cg_cfg.stall_ns, (uint64_t)ms * 1000000u);
    return CG_OK;
}

/* ---- start-up and fork ----------------------------------------------------- */

CG_HIDDEN void cg_call_after_fork_child(void);

static void cg_atfork_prepare(void) { pthread_mutex_lock(&cg_cfg_lock); }
static void cg_atfork_parent(void) { pthread_mutex_unlock(&cg_cfg_lock); }
static void cg_atfork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
    cg_cfg_lock = fresh;
    cg_domains_after_fork_child();
    cg_stats_after_fork_child();
    cg_call_after_fork_child();
}

/* Runs before any layer registers (layers depend on libcallguard, so its
 * constructor runs first). */
__attribute__((constructor)) static void cg_init(void)
{
    cg_note_own_object((const void *)cg_init);
    const char *dir = getenv("CALLGUARD_STATS_DIR");
    if (cg_stats_init(dir) != CG_OK) cg_die("%s", cg_last_error());
    if (dir && *dir) atomic_store(&cg_cfg.stats_on, 1);

    /* The runtime default: detect CPython (stalls are reported, nothing is
     * released) unless told otherwise. */
    cg_runtime_set_locked("auto");

    /* The policy file first, then the rest of the environment: later wins. */
    const char *policy = getenv("CALLGUARD_POLICY");
    if (policy && cg_configure_locked("CALLGUARD_POLICY", policy, 1) != CG_OK)
        cg_die("CALLGUARD_POLICY=%s: %s", policy, cg_last_error());
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "CALLGUARD_", 10) != 0) continue;
        const char *eq = strchr(*e, '=');
        if (!eq) continue;
        char var[64];
        size_t n = (size_t)(eq - *e);
        if (n >= sizeof var) cg_die("%.*s: unknown setting", (int)n, *e);
        memcpy(var, *e, n);
        var[n] = '\0';
        if (strcmp(var, "CALLGUARD_POLICY") == 0) continue;
        if (cg_configure_locked(var, eq + 1, 1) != CG_OK) cg_die("%s=%s: %s", var, eq + 1, cg_last_error());
    }
    if (cg_report_path) atexit(cg_report_at_exit);
    on_exit(cg_note_exit, NULL); /* registered last: runs before the report is written */
    pthread_atfork(cg_atfork_prepare, cg_atfork_parent, cg_atfork_child);
}
