/* Named lock domains, shared by every layer in the process. A domain is
 * created the first time a site is serialized into it and lives for the
 * rest of the process, so a site can hold its id without a reference count.
 * A domain has one scope: process (one mutex) or handle (striped mutexes
 * keyed by the first input handle). Mixing scopes in one domain would give
 * two locks that do not exclude each other, so it is refused. */
#define _GNU_SOURCE
#include "internal.h"

#include <string.h>

typedef struct cg_domain {
    char name[CG_DOMAIN_NAME_MAX];
    uint32_t scope;
    pthread_mutex_t lock;
    pthread_mutex_t stripe[CG_STRIPES];
} cg_domain;

static cg_domain cg_domains[CG_MAX_DOMAINS];
static _Atomic uint32_t cg_ndomains;

static void cg_domain_init_locks(cg_domain *d)
{
    pthread_mutex_init(&d->lock, NULL);
    for (int i = 0; i < CG_STRIPES; i++) pthread_mutex_init(&d->stripe[i], NULL);
}

/* Caller holds cg_cfg_lock. */
int cg_domain_get(const char *name, cg_scope scope, uint32_t *id)
{
    size_t len = strlen(name);
    if (len == 0 || len >= CG_DOMAIN_NAME_MAX)
        return cg_fail(CG_EINVAL, "domain name '%s': expected 1 to %d characters", name, CG_DOMAIN_NAME_MAX - 1);
    for (size_t i = 0; i < len; i++) {
        char ch = name[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                 ch == '-' || ch == '.';
        if (!ok)
            return cg_fail(CG_EINVAL, "domain name '%s': expected letters, digits, '_', '-' or '.'", name);
    }
    uint32_t n = atomic_load(&cg_ndomains);
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(cg_domains[i].name, name) != 0) continue;
        if (cg_domains[i].scope != (uint32_t)scope)
            return cg_fail(CG_EINVAL, "domain '%s' is %s-scoped; a site cannot join it with scope %s", name,
                           cg_domains[i].scope == CG_SCOPE_HANDLE ? "handle" : "process",
                           scope == CG_SCOPE_HANDLE ? "handle" : "process");
        *id = i + 1;
        return CG_OK;
    }
    if (n == CG_MAX_DOMAINS) return cg_fail(CG_ENOMEM, "too many lock domains (at most %d)", CG_MAX_DOMAINS);
    cg_domain *d = &cg_domains[n];
    memcpy(d->name, name, len + 1);
    d->scope = scope;
    cg_domain_init_locks(d);
    atomic_store(&cg_ndomains, n + 1);
    *id = n + 1;
    return CG_OK;
}

const char *cg_domain_name(uint32_t id)
{
    return id && id <= atomic_load(&cg_ndomains) ? cg_domains[id - 1].name : "";
}

static pthread_mutex_t *cg_domain_mutex(uint32_t id, uint32_t scope, const void *key)
{
    cg_domain *d = &cg_domains[id - 1];
    if (scope != CG_SCOPE_HANDLE || !key) return &d->lock;
    /* Handles are pointers to driver objects, often neighbours in one
     * array: mix every bit so they spread over the stripes. */
    uint64_t h = (uint64_t)(uintptr_t)key;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return &d->stripe[h & (CG_STRIPES - 1)];
}

void cg_domain_lock(uint32_t id, uint32_t scope, const void *key, uint64_t *wait_ns)
{
    pthread_mutex_t *m = cg_domain_mutex(id, scope, key);
    if (!wait_ns) {
        pthread_mutex_lock(m);
        return;
    }
    /* Time only a wait that happens: an uncontended lock costs no clock. */
    if (pthread_mutex_trylock(m) == 0) return;
    uint64_t t0 = cg_now_ns();
    pthread_mutex_lock(m);
    *wait_ns = cg_now_ns() - t0;
}

void cg_domain_unlock(uint32_t id, uint32_t scope, const void *key)
{
    pthread_mutex_unlock(cg_domain_mutex(id, scope, key));
}

/* After fork only the forking thread exists: locks other threads held stay
 * held in the child forever unless reset. */
void cg_domains_after_fork_child(void)
{
    uint32_t n = atomic_load(&cg_ndomains);
    for (uint32_t i = 0; i < n; i++) cg_domain_init_locks(&cg_domains[i]);
}
