/* cg_load_binary: requests, results, and the memory cache.
 *
 * The memory cache is single-flight: the first request for a key inserts a
 * LOADING entry and loads without the table's lock; later requests for the
 * key wait on the table's condition variable until it is READY (then share
 * its module and kernel) or gone (the load failed: they try themselves, so
 * each gets its own error and build log). Entries live as long as the
 * process, as Triton keeps its loaded kernels. */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- results ---- */

static char *dup_or_empty(const char *s) { return strdup(s ? s : ""); }

LB_EXPORT const char *cg_load_status_name(int status)
{
    switch (status) {
    case 0: return "CG_OK";
    case -1: return "CG_EINVAL";
    case -2: return "CG_ENOENT";
    case -3: return "CG_EIO";
    case -4: return "CG_ENOMEM";
    case CG_LOAD_EDRIVER: return "CG_LOAD_EDRIVER";
    case CG_LOAD_ERESOURCES: return "CG_LOAD_ERESOURCES";
    default: return "unknown";
    }
}

static const lb_backend *backend_of(cg_load_api api)
{
    switch (api) {
#ifdef CG_LOAD_HAVE_ZE
    case CG_LOAD_API_ZE: return &lb_backend_ze;
#endif
#ifdef CG_LOAD_HAVE_CL
    case CG_LOAD_API_CL: return &lb_backend_cl;
#endif
#ifdef CG_LOAD_HAVE_CUDA
    case CG_LOAD_API_CUDA: return &lb_backend_cuda;
#endif
    default: return NULL;
    }
}

static void loaded_free_strings(lb_loaded *l)
{
    free(l->flags);
    free(l->log);
    free(l->native);
    l->flags = l->log = NULL;
    l->native = NULL;
}

/* Copies l's figures into res, duplicating its strings. */
static int fill_result(cg_load_result *res, const lb_loaded *l)
{
    char *flags = dup_or_empty(l->flags), *log = dup_or_empty(l->log);
    if (!flags || !log) {
        free(flags);
        free(log);
        return CG_ENOMEM;
    }
    free(res->build_flags);
    free(res->build_log);
    res->build_flags = flags;
    res->build_log = log;
    res->module = l->module;
    res->kernel = l->kernel;
    res->n_regs = l->n_regs;
    res->n_spills = l->n_spills;
    res->max_threads = l->max_threads;
    res->simd_width = l->simd_width;
    res->retried = l->retried;
    res->spill_bytes = l->spill_bytes;
    res->private_bytes = l->private_bytes;
    res->local_bytes = l->local_bytes;
    return CG_OK;
}

LB_EXPORT void cg_load_result_free(cg_load_result *r)
{
    if (!r) return;
    if (r->owns_module) {
        const lb_backend *b = backend_of(r->api);
        if (b && (r->module || r->kernel)) b->destroy(r->module, r->kernel);
    }
    free(r->build_flags);
    free(r->build_log);
    free(r->message);
    free(r);
}

/* ---- resolving the driver's names ---- */

/* A lookup that fails leaves its message for the program's dlerror(): read
 * and dropped here, as the runtime's probes do (src/runtime/probe.h). */
void *lb_resolve(const char *soname, void **handle, const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (f) return f;
    if (!*handle) *handle = dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
    f = *handle ? dlsym(*handle, name) : NULL;
    if (!f) (void)dlerror();
    return f;
}

struct ident_walk {
    lb_str *out;
    const char *const *prefixes;
    char first_dir[PATH_MAX];
};

static void add_file_identity(lb_str *out, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return;
    const char *base = strrchr(path, '/');
    lb_str_add(out, "%s:%lld:%lld.%09ld;", base ? base + 1 : path, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
               st.st_mtim.tv_nsec);
}

static int ident_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct ident_walk *w = arg;
    const char *path = info->dlpi_name;
    if (!path || !*path) return 0;
    /* the file itself: callguard run's libcallguard-real-API.so is a link to the real library */
    char real[PATH_MAX];
    if (!realpath(path, real)) snprintf(real, sizeof real, "%s", path);
    /* callguard's own shims stand in for the vendor's sonames: not the driver. Under callguard run they are
     * links in a folder of the run's (/tmp/callguard-XXXXXX/shims/): the file they name is in callguard/shims/.
     * (A process that opened the shim and one that did not must make the same key.) */
    if (strstr(path, "/callguard/shims/") || strstr(real, "/callguard/shims/")) return 0;
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    for (const char *const *p = w->prefixes; *p; p++)
        if (strncmp(base, *p, strlen(*p)) == 0) {
            add_file_identity(w->out, real);
            if (!w->first_dir[0] && base > real && (size_t)(base - real) < sizeof w->first_dir) {
                memcpy(w->first_dir, real, (size_t)(base - real));
                w->first_dir[base - real] = '\0';
            }
            break;
        }
    return 0;
}

void lb_objects_identity(lb_str *out, const char *const *prefixes, const char *const *siblings)
{
    struct ident_walk w = {out, prefixes, {0}};
    dl_iterate_phdr(ident_object, &w);
    /* Compilers the driver opens only at its first compile (IGC, NVIDIA's
     * PTX JIT): looked for beside the driver, so the key is the same before
     * and after that first compile. */
    for (const char *const *s = siblings; w.first_dir[0] && s && *s; s++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s%s", w.first_dir, *s);
        add_file_identity(out, path);
    }
}

/* ---- the memory cache ---- */

enum { ENTRY_LOADING, ENTRY_READY };

struct mentry {
    struct mentry *next;
    uint8_t hash[32];
    char *key; /* the whole memory key, compared on a hash match */
    int state;
    lb_loaded loaded;
};

#define NBUCKETS 256
static struct mentry *buckets[NBUCKETS];
static pthread_mutex_t mlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t mcond = PTHREAD_COND_INITIALIZER;

static struct mentry *mfind(const uint8_t hash[32], const char *key)
{
    for (struct mentry *e = buckets[hash[0]]; e; e = e->next)
        if (memcmp(e->hash, hash, 32) == 0 && strcmp(e->key, key) == 0) return e;
    return NULL;
}

static void mremove(struct mentry *gone)
{
    for (struct mentry **p = &buckets[gone->hash[0]]; *p; p = &(*p)->next)
        if (*p == gone) {
            *p = gone->next;
            return;
        }
}

/* ---- loading ---- */

/* Disk cache, else build (and store). On success l holds the module. */
static int load_through_disk(const lb_backend *b, const cg_load_request *req, const lb_str *key, int use_disk,
                             lb_loaded *l, cg_load_result *res)
{
    if (use_disk) {
        void *bin = NULL;
        size_t n = 0;
        char *flags = NULL;
        int got = lb_disk_get(key->p, key->len, &bin, &n, &flags);
        if (got == 1) {
            cg_load_result scratch = {0};
            int rc = b->load_native(req, bin, n, flags, l, &scratch);
            free(bin);
            free(flags);
            if (rc == CG_OK) {
                free(scratch.message);
                res->source = CG_LOAD_SOURCE_DISK;
                lb_stat_add(&lb_stats.disk_hits);
                return CG_OK;
            }
            lb_disk_reject(key->p, key->len, scratch.message ? scratch.message : "the driver refused it");
            free(scratch.message);
        }
    }
    int rc = b->build(req, l, res);
    if (rc != CG_OK) return rc;
    res->source = CG_LOAD_SOURCE_BUILT;
    if (use_disk) {
        void *bin = l->native;
        size_t n = l->native_size;
        if (bin || b->native_of(req, l, &bin, &n) == CG_OK) {
            lb_disk_put(key->p, key->len, bin, n, l->flags ? l->flags : "");
            free(bin);
        }
    } else {
        free(l->native);
    }
    l->native = NULL;
    return CG_OK;
}

static int check_request(const cg_load_request *req, cg_load_result *res)
{
    if (!req) return lb_fail(res, CG_EINVAL, NULL, 0, "request is NULL");
    if (req->api != CG_LOAD_API_ZE && req->api != CG_LOAD_API_CL && req->api != CG_LOAD_API_CUDA)
        return lb_fail(res, CG_EINVAL, NULL, 0,
                       "api %d: expected CG_LOAD_API_ZE (1), CG_LOAD_API_CL (2) or CG_LOAD_API_CUDA (3)",
                       (int)req->api);
    if (!req->bytes || req->size == 0)
        return lb_fail(res, CG_EINVAL, NULL, 0, "no kernel bytes (bytes NULL or size 0)");
    if (!req->kernel_name || !*req->kernel_name)
        return lb_fail(res, CG_EINVAL, NULL, 0, "no kernel name: expected the name of a kernel of the module");
    int fmt = (int)req->format;
    if (fmt != CG_LOAD_FORMAT_IL && fmt != CG_LOAD_FORMAT_NATIVE &&
        (fmt != CG_LOAD_FORMAT_SOURCE || req->api != CG_LOAD_API_CL))
        return lb_fail(res, CG_EINVAL, NULL, 0,
                       "format %d: expected CG_LOAD_FORMAT_IL (0), CG_LOAD_FORMAT_NATIVE (1) or, for OpenCL only, "
                       "CG_LOAD_FORMAT_SOURCE (2)",
                       fmt);
    if (req->flags & ~(CG_LOAD_NO_CACHE | CG_LOAD_NO_DISK_CACHE | CG_LOAD_NO_RETRY))
        return lb_fail(res, CG_EINVAL, NULL, 0, "flags 0x%x: expected CG_LOAD_NO_CACHE, _NO_DISK_CACHE, _NO_RETRY",
                       req->flags);
    if (req->api != CG_LOAD_API_CUDA && (!req->context || !req->device))
        return lb_fail(res, CG_EINVAL, NULL, 0, "%s needs its context and device handles (NULL given)",
                       req->api == CG_LOAD_API_ZE ? "Level Zero" : "OpenCL");
    return CG_OK;
}

/* CG_LOAD_NO_CACHE or CALLGUARD_CACHE=off: built, and the caller's to release. */
static int load_uncached(const lb_backend *b, const cg_load_request *req, cg_load_result *res)
{
    lb_loaded l = {0};
    int rc = b->build(req, &l, res);
    if (rc != CG_OK) return rc;
    res->owns_module = 1;
    rc = fill_result(res, &l);
    loaded_free_strings(&l);
    if (rc != CG_OK) return lb_fail(res, rc, NULL, 0, "out of memory");
    return b->prepare ? b->prepare(req, &l, res) : CG_OK;
}

/* The disk cache's key (device, driver, compiler, the request and its
 * bytes' hash) and the memory cache's (that, and what a loaded module
 * depends on). On failure both are freed. */
static int make_keys(const lb_backend *b, const cg_load_request *req, lb_str *key, lb_str *memkey, cg_load_result *res)
{
    lb_str_add(key, "callguard load cache v1\napi=%s\n", b->name);
    int rc = b->identity(req, key, memkey, res);
    if (rc != CG_OK) {
        free(key->p);
        free(memkey->p);
        return rc;
    }
    char hex[65];
    lb_sha256_hex(req->bytes, req->size, hex);
    lb_str_add(key, "format=%d\nflags=%s\nkernel=%s\nmax_spills=%d\nretry=%d\nbytes=%s\n", (int)req->format,
               req->build_flags ? req->build_flags : "", req->kernel_name, req->max_spills,
               !(req->flags & CG_LOAD_NO_RETRY), hex);
    lb_str_addn(memkey, key->p ? key->p : "", key->len);
    if (key->oom || memkey->oom) {
        free(key->p);
        free(memkey->p);
        return lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    }
    return CG_OK;
}

/* The memory cache's entry for key, once no other thread is loading it:
 * 1 when it is ready (its module copied into hit), 0 when there was none
 * and this thread now loads it (a new entry, LOADING, in *mine), -1 out of
 * memory. */
static int mclaim(const uint8_t hash[32], const char *key, lb_loaded *hit, struct mentry **mine, int *waited)
{
    pthread_mutex_lock(&mlock);
    struct mentry *e;
    while ((e = mfind(hash, key)) != NULL && e->state == ENTRY_LOADING) {
        *waited = 1;
        pthread_cond_wait(&mcond, &mlock);
    }
    if (e) { /* READY */
        *hit = e->loaded;
        pthread_mutex_unlock(&mlock);
        return 1;
    }
    e = calloc(1, sizeof *e);
    char *ekey = e ? strdup(key) : NULL;
    if (!ekey) {
        pthread_mutex_unlock(&mlock);
        free(e);
        return -1;
    }
    memcpy(e->hash, hash, 32);
    e->key = ekey;
    e->state = ENTRY_LOADING;
    e->next = buckets[hash[0]];
    buckets[hash[0]] = e;
    pthread_mutex_unlock(&mlock);
    *mine = e;
    return 0;
}

/* Loads the module of the entry this thread claimed, through the disk
 * cache, and makes the entry READY, or removes it on failure; the threads
 * waiting for it wake either way. Frees key. */
static int load_claimed(const lb_backend *b, const cg_load_request *req, lb_str *key, int use_disk, struct mentry *e,
                        cg_load_result *res)
{
    lb_loaded l = {0};
    int rc = load_through_disk(b, req, key, use_disk, &l, res);
    free(key->p);
    if (rc == CG_OK) rc = fill_result(res, &l) == CG_OK ? CG_OK : lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");

    pthread_mutex_lock(&mlock);
    if (rc == CG_OK) {
        e->loaded = l;
        e->state = ENTRY_READY;
    } else {
        mremove(e);
    }
    pthread_cond_broadcast(&mcond);
    pthread_mutex_unlock(&mlock);
    if (rc != CG_OK) {
        if (l.module || l.kernel) b->destroy(l.module, l.kernel);
        loaded_free_strings(&l);
        free(e->key);
        free(e);
        return rc;
    }
    return b->prepare ? b->prepare(req, &l, res) : CG_OK;
}

/* Through the memory cache: one load per key, the other threads that ask
 * for it meanwhile waiting for it. Frees key and memkey. */
static int load_cached(const lb_backend *b, const cg_load_request *req, lb_str *key, lb_str *memkey,
                       cg_load_result *res)
{
    uint8_t mhash[32];
    lb_sha256 s;
    lb_sha256_init(&s);
    lb_sha256_update(&s, memkey->p, memkey->len);
    lb_sha256_final(&s, mhash);
    int use_disk = !(req->flags & CG_LOAD_NO_DISK_CACHE) && lb_disk_enabled() && b->cacheable(req);

    lb_loaded hit;
    struct mentry *e = NULL;
    int waited = 0;
    int got = mclaim(mhash, memkey->p, &hit, &e, &waited);
    free(memkey->p);
    if (got == 0) return load_claimed(b, req, key, use_disk, e, res);
    free(key->p);
    if (got < 0) return lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    lb_stat_add(&lb_stats.memory_hits);
    if (waited) lb_stat_add(&lb_stats.waits);
    res->source = CG_LOAD_SOURCE_MEMORY;
    if (fill_result(res, &hit) != CG_OK) return lb_fail(res, CG_ENOMEM, NULL, 0, "out of memory");
    return b->prepare ? b->prepare(req, &hit, res) : CG_OK;
}

static int load(const cg_load_request *req, cg_load_result *res)
{
    int rc = check_request(req, res);
    if (rc != CG_OK) return rc;
    res->api = req->api;
    const lb_backend *b = backend_of(req->api);
    if (!b) return lb_fail(res, CG_ENOENT, NULL, 0, "this libcallguard_load was built without that API's headers");
    if ((rc = b->init(res)) != CG_OK) return rc;
    if ((rc = lb_disk_config(res)) != CG_OK) return rc;
    lb_stat_add(&lb_stats.requests);
    if ((req->flags & CG_LOAD_NO_CACHE) || lb_cache_off()) return load_uncached(b, req, res);
    lb_str key = {0}, memkey = {0};
    if ((rc = make_keys(b, req, &key, &memkey, res)) != CG_OK) return rc;
    return load_cached(b, req, &key, &memkey, res);
}

LB_EXPORT int cg_load_binary(const cg_load_request *req, cg_load_result **out)
{
    if (!out) return CG_EINVAL;
    cg_load_result *res = calloc(1, sizeof *res);
    *out = res;
    if (!res) return CG_ENOMEM;
    res->n_regs = res->n_spills = res->max_threads = res->simd_width = -1;
    res->spill_bytes = res->private_bytes = res->local_bytes = -1;
    int rc = load(req, res);
    if (!res->build_flags) res->build_flags = dup_or_empty(req && rc != CG_EINVAL ? req->build_flags : "");
    if (!res->build_log) res->build_log = strdup("");
    if (!res->message) res->message = strdup("");
    if (!res->build_flags || !res->build_log || !res->message) {
        cg_load_result_free(res);
        *out = NULL;
        return CG_ENOMEM;
    }
    if (rc != CG_OK) {
        /* A failed request hands out no module: one it owns (a prepare step
         * failed after the load) is destroyed, a cached one stays cached. */
        const lb_backend *b = backend_of(res->api);
        if (res->owns_module && b) b->destroy(res->module, res->kernel);
        res->owns_module = 0;
        res->module = res->kernel = NULL;
    }
    return rc;
}
