/* Named lock domains, shared by every layer in the process. A domain is
 * created the first time a site is serialized into it and lives for the
 * rest of the process, so a site can hold its id without a reference count.
 * A domain has one scope: process (one mutex) or handle (one lock per
 * value of the first input handle, hlock.c: two handles never wait for
 * each other). Mixing scopes in one domain would give
 * two locks that do not exclude each other, so it is refused. A site of
 * scope once (serialized until its first success) takes the process lock
 * while it is closed: it may share a process-scoped domain. */
#define _GNU_SOURCE
#include "domain.h"

#include "../common/errors.h"
#include "hlock.h"
#include "../common/names.h"
#include "config.h"

#include <string.h>

typedef struct cgi_domain {
    char name[CGI_DOMAIN_NAME_MAX];
    uint32_t scope;
    pthread_mutex_t lock;
} cgi_domain;

static cgi_domain cgi_domains[CGI_MAX_DOMAINS];
static _Atomic uint32_t cgi_ndomains;

static void cgi_domain_init_locks(cgi_domain *d) { pthread_mutex_init(&d->lock, NULL); }

/* The lock a site of scope `scope` takes: once's is the process's. */
static uint32_t cgi_lock_scope(uint32_t scope) { return scope == CG_SCOPE_HANDLE ? CG_SCOPE_HANDLE : CG_SCOPE_PROCESS; }

/* Caller holds cgi_cfg_lock. */
int cgi_domain_get(const char *name, cg_scope scope, uint32_t *id)
{
    size_t len = strlen(name);
    if (len == 0 || len >= CGI_DOMAIN_NAME_MAX)
        return cgi_fail(CG_EINVAL, "domain name '%s': expected 1 to %d characters", name, CGI_DOMAIN_NAME_MAX - 1);
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                 ch == '-' || ch == '.';
        if (!ok) return cgi_fail(CG_EINVAL, "domain name '%s': expected letters, digits, '_', '-' or '.'", name);
    }
    uint32_t n = atomic_load(&cgi_ndomains);
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(cgi_domains[i].name, name) != 0) continue;
        if (cgi_domains[i].scope != cgi_lock_scope(scope))
            return cgi_fail(CG_EINVAL, "domain '%s' is %s-scoped; a site cannot join it with scope %s", name,
                            cgi_scope_name(cgi_domains[i].scope), cgi_scope_name(scope));
        if (id) *id = i + 1;
        return CG_OK;
    }
    if (!id) return CG_OK; /* only checking */
    if (n == CGI_MAX_DOMAINS) return cgi_fail(CG_ENOMEM, "too many lock domains (at most %d)", CGI_MAX_DOMAINS);
    cgi_domain *d = &cgi_domains[n];
    memcpy(d->name, name, len + 1);
    d->scope = cgi_lock_scope(scope);
    cgi_domain_init_locks(d);
    atomic_store(&cgi_ndomains, n + 1);
    *id = n + 1;
    return CG_OK;
}

const char *cgi_domain_name(uint32_t id)
{
    id &= CGI_DOM_ID;
    return id && id <= atomic_load(&cgi_ndomains) ? cgi_domains[id - 1].name : "";
}

cgi_dlock cgi_domain_lock(uint32_t id, uint32_t scope, const void *key, int *waited, cgi_peak *waiting)
{
    /* Whether it waited: the caller times only a wait that happens, so an
     * uncontended lock costs no clock and no count. */
    if (scope == CG_SCOPE_HANDLE && key) {
        cgi_hl *l = cgi_hl_try(id, (uintptr_t)key, 1);
        if (l) return l;
        if (waiting) cgi_peak_in(waiting);
        l = cgi_hl_lock(id, (uintptr_t)key, 1), *waited = 1;
        if (waiting) cgi_peak_out(waiting);
        return l;
    }
    pthread_mutex_t *m = &cgi_domains[id - 1].lock;
    if (pthread_mutex_trylock(m) == 0) return NULL;
    if (waiting) cgi_peak_in(waiting);
    pthread_mutex_lock(m), *waited = 1;
    if (waiting) cgi_peak_out(waiting);
    return NULL;
}

void cgi_domain_unlock(uint32_t id, cgi_dlock l)
{
    if (l)
        cgi_hl_unlock(l, 1);
    else
        pthread_mutex_unlock(&cgi_domains[id - 1].lock);
}

/* After fork only the forking thread exists: locks other threads held stay
 * held in the child forever unless reset (the handle scope's: hlock.c). */
void cgi_domains_after_fork_child(void)
{
    uint32_t n = atomic_load(&cgi_ndomains);
    for (uint32_t i = 0; i < n; i++)
        cgi_domain_init_locks(&cgi_domains[i]);
}

/* ---- held by hand (layer.h) ------------------------------------------------
 * A hand-written wrapper holds the domain between its own real calls, on a
 * thread already inside the guarded call: no statistics, no runtime. */
uint32_t cg_domain_id(const char *name)
{
    uint32_t id = 0;
    pthread_mutex_lock(&cgi_cfg_lock);
    if (!name || cgi_domain_get(name, CG_SCOPE_PROCESS, &id) != CG_OK) id = 0;
    pthread_mutex_unlock(&cgi_cfg_lock);
    return id;
}

void cg_domain_hold(uint32_t id) { pthread_mutex_lock(&cgi_domains[id - 1].lock); }

void cg_domain_release(uint32_t id) { pthread_mutex_unlock(&cgi_domains[id - 1].lock); }
