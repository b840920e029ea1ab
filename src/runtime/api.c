/* The C API that changes the configuration: callguard.h's setters. Later
 * sources win: generated defaults, then the policy file, then the
 * environment, then these calls. */
#define _GNU_SOURCE
#include "internal.h"

#include "environment.h"
#include "errors.h"
#include "policy_file.h"
#include "settings.h"
#include "site.h"

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

int cg_serialize(const char *site, const char *domain, cg_scope scope)
{
    if (!site) return cgi_fail(CG_EINVAL, "cg_serialize: site must not be NULL");
    if (scope != CG_SCOPE_PROCESS && scope != CG_SCOPE_HANDLE)
        return cgi_fail(CG_EINVAL, "scope %d: expected CG_SCOPE_PROCESS or CG_SCOPE_HANDLE", (int)scope);
    pthread_mutex_lock(&cgi_cfg_lock);
    int rc = cgi_site_set_serialize(site, domain, scope);
    pthread_mutex_unlock(&cgi_cfg_lock);
    return rc;
}

int cg_set_transition(const char *site, cg_transition t)
{
    if ((unsigned)t > CG_TRANSITION_NEVER)
        return cgi_fail(CG_EINVAL, "transition %d: expected CG_TRANSITION_ALWAYS, _BLOCKING or _NEVER", (int)t);
    pthread_mutex_lock(&cgi_cfg_lock);
    int rc = CG_OK;
    if (site) {
        rc = cgi_site_set_transition(site, t);
    } else {
        for (cg_layer *l = cgi_layers; l; l = l->next)
            for (unsigned i = 0; i < l->nsites; i++) atomic_store(&l->sites[i].transition, t);
        cgi_refresh_all();
    }
    pthread_mutex_unlock(&cgi_cfg_lock);
    return rc;
}

int cg_set_blocking(const char *site, int blocking, const char *reason)
{
    if (!site) return cgi_fail(CG_EINVAL, "cg_set_blocking: site must not be NULL");
    if (blocking && (!reason || !*reason)) return cgi_fail(CG_EINVAL, "%s: blocking needs a reason", site);
    pthread_mutex_lock(&cgi_cfg_lock);
    int rc = cgi_site_set_blocking(site, blocking != 0, blocking ? strdup(reason) : NULL);
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
    if (!name) return cgi_fail(CG_EINVAL, "runtime NULL: expected auto, none or cpython");
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
