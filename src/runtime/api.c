/* The C API that changes the configuration: callguard.h's setters. Later
 * sources win: generated defaults, then the policy file, then the
 * environment, then these calls. */
#define _GNU_SOURCE
#include "internal.h"

#include "environment.h"
#include "../common/errors.h"
#include "policy_file.h"
#include "settings.h"
#include "site.h"
#include "threads.h"
#include "values.h"

#include <stdlib.h>
#include <string.h>

int cg_configure(const char *var, const char *value)
{
    if (!var || !value) return cgi_fail(CG_EINVAL, "cg_configure: variable and value must not be NULL");
    pthread_mutex_lock(&cgi_cfg_lock);
    int rc = cgi_configure_locked(var, value, 0);
    pthread_mutex_unlock(&cgi_cfg_lock);
    if (rc != CG_OK) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", cg_last_error());
        cgi_fail(rc, "%s=%s: %s", var, value, msg);
    }
    return rc;
}

int cg_policy_load(const char *path)
{
    pthread_mutex_lock(&cgi_cfg_lock);
    int rc = cgi_policy_load_locked(path, 0);
    pthread_mutex_unlock(&cgi_cfg_lock);
    return rc;
}

/* A site name as cg_serialize and its siblings take it. */
static int cgi_check_site(const char *fn, const char *site)
{
    if (!site) return cgi_fail(CG_EINVAL, "%s: site must not be NULL", fn);
    if (!cgi_valid_site_name(site))
        return cgi_fail(CG_EINVAL, "%s: '%s' is not an entry point name (letters, digits and '_', at most %d)", fn,
                        site, CGI_NAME_MAX - 1);
    return CG_OK;
}

/* Like every per-site setting, these are kept for layers that register
 * later: CG_PENDING when no loaded layer has the name (settings.h). */
int cg_serialize(const char *site, const char *domain, cg_scope scope)
{
    int rc = cgi_check_site("cg_serialize", site);
    if (rc != CG_OK) return rc;
    if ((unsigned)scope > CG_SCOPE_SHARED)
        return cgi_fail(CG_EINVAL,
                        "scope %d: expected CG_SCOPE_PROCESS, CG_SCOPE_HANDLE, CG_SCOPE_ONCE or CG_SCOPE_SHARED",
                        (int)scope);
    pthread_mutex_lock(&cgi_cfg_lock);
    cgi_setting **mark = cgi_settings_mark();
    cgi_setting *st = cgi_setting_add(CGI_SET_SERIALIZE, site, "cg_serialize");
    st->domain = domain && *domain ? strdup(domain) : NULL;
    st->scope = scope;
    rc = cgi_settings_commit(mark);
    pthread_mutex_unlock(&cgi_cfg_lock);
    return rc;
}

int cg_set_transition(const char *site, cg_transition t)
{
    if ((unsigned)t > CG_TRANSITION_NEVER)
        return cgi_fail(CG_EINVAL, "transition %d: expected CG_TRANSITION_ALWAYS, _BLOCKING or _NEVER", (int)t);
    int rc = site ? cgi_check_site("cg_set_transition", site) : CG_OK;
    if (rc != CG_OK) return rc;
    pthread_mutex_lock(&cgi_cfg_lock);
    cgi_setting **mark = cgi_settings_mark();
    cgi_setting_add(CGI_SET_TRANSITION, site, "cg_set_transition")->transition = t;
    rc = cgi_settings_commit(mark);
    pthread_mutex_unlock(&cgi_cfg_lock);
    return rc;
}

int cg_set_blocking(const char *site, int blocking, const char *reason)
{
    int rc = cgi_check_site("cg_set_blocking", site);
    if (rc != CG_OK) return rc;
    if (blocking && (!reason || !*reason)) return cgi_fail(CG_EINVAL, "%s: blocking needs a reason", site);
    pthread_mutex_lock(&cgi_cfg_lock);
    cgi_setting **mark = cgi_settings_mark();
    cgi_setting *st = cgi_setting_add(CGI_SET_BLOCKING, site, "cg_set_blocking");
    st->blocking = blocking != 0;
    st->reason = blocking ? strdup(reason) : NULL;
    rc = cgi_settings_commit(mark);
    pthread_mutex_unlock(&cgi_cfg_lock);
    return rc;
}

int cg_set_adapter(const cg_adapter *adapter, cg_adapter_mode mode)
{
    if (mode != CG_ADAPTER_DETECT && mode != CG_ADAPTER_ACTIVE)
        return cgi_fail(CG_EINVAL, "adapter mode %d: expected CG_ADAPTER_DETECT or CG_ADAPTER_ACTIVE", (int)mode);
    if (adapter && (!adapter->holds || !adapter->call_outside || !adapter->name))
        return cgi_fail(CG_EINVAL, "adapter needs a name, holds and call_outside");
    pthread_mutex_lock(&cgi_cfg_lock);
    atomic_store(&cgi_cfg.adapter_mode, mode);
    atomic_store(&cgi_cfg.adapter, adapter);
    cgi_refresh_all();
    pthread_mutex_unlock(&cgi_cfg_lock);
    return CG_OK;
}

int cg_set_runtime(const char *name)
{
    if (!name) return cgi_fail(CG_EINVAL, "runtime NULL: expected auto, release, none, cpython or julia");
    pthread_mutex_lock(&cgi_cfg_lock);
    int rc = cgi_runtime_set_locked(name);
    pthread_mutex_unlock(&cgi_cfg_lock);
    return rc;
}

int cg_stats_enable(int on)
{
    pthread_mutex_lock(&cgi_cfg_lock);
    atomic_store(&cgi_cfg.stats_on, on != 0);
    cgi_refresh_all();
    pthread_mutex_unlock(&cgi_cfg_lock);
    return CG_OK;
}

int cg_set_stall_ms(uint32_t ms)
{
    if (ms < 1 || ms > 3600000) return cgi_fail(CG_EINVAL, "stall limit %u ms: expected 1 to 3600000", ms);
    atomic_store(&cgi_cfg.stall_ns, (uint64_t)ms * 1000000u);
    return CG_OK;
}

int cg_check_threads(int on)
{
    pthread_mutex_lock(&cgi_cfg_lock);
    int rc = cgi_thr_set_check(on);
    if (rc == CG_OK) cgi_refresh_all();
    pthread_mutex_unlock(&cgi_cfg_lock);
    return rc;
}

int cg_serialize_handles(int on)
{
    pthread_mutex_lock(&cgi_cfg_lock);
    int rc = cgi_thr_set_serialize(on);
    if (rc == CG_OK) cgi_refresh_all();
    pthread_mutex_unlock(&cgi_cfg_lock);
    return rc;
}
