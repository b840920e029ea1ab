/* libcallguard-load internals. The core (load.c: requests, results, the
 * memory cache) calls the disk cache and reaches the back ends (one per
 * API) only through lb_backend's function pointers; the back ends call the
 * core's helpers. A file includes and calls only what is on a lower floor,
 * or in its own row (tests/floors.py).
 * Floors, lowest first:
 *   0 internal.h         this map; what the files share
 *   1 sha256             SHA-256 of the cache keys
 *   1 util               counters, strings, failure details
 *   2 disk               the disk cache: its folder checked, entries read and written
 *   3 load               the core
 *   4 ze                 the Level Zero back end
 *   4 cl                 the OpenCL back end
 *   4 cuda               the CUDA back end
 */
#ifndef CG_LOAD_INTERNAL_H
#define CG_LOAD_INTERNAL_H

#include "callguard/load.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define LB_EXPORT __attribute__((visibility("default")))

/* ---- sha256.c ---- */
typedef struct lb_sha256 {
    uint32_t h[8];
    uint64_t len;
    uint8_t buf[64];
    size_t n;
} lb_sha256;
void lb_sha256_init(lb_sha256 *s);
void lb_sha256_update(lb_sha256 *s, const void *data, size_t len);
void lb_sha256_final(lb_sha256 *s, uint8_t out[32]);
void lb_sha256_hex(const void *data, size_t len, char out[65]);
void lb_hex(const uint8_t *p, size_t n, char *out);

/* ---- growable strings (util.c); oom is sticky ---- */
typedef struct lb_str {
    char *p;
    size_t len, cap;
    int oom;
} lb_str;
void lb_str_add(lb_str *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lb_str_addn(lb_str *s, const void *data, size_t n);
/* Takes the buffer (never NULL unless out of memory); s is empty after. */
char *lb_str_take(lb_str *s);

/* What a back end loaded: owned by a result or by a memory cache entry. */
typedef struct lb_loaded {
    void *module, *kernel;
    int n_regs, n_spills, max_threads, simd_width, retried;
    long long spill_bytes, private_bytes, local_bytes;
    char *flags;  /* malloc'd */
    char *log;    /* malloc'd */
    void *native; /* a native binary the build made on the way (CUDA's cubin), malloc'd; for the disk cache */
    size_t native_size;
} lb_loaded;

/* Failure details a back end fills (res is the caller's result; util.c). */
int lb_fail(cg_load_result *res, int status, const char *call, long api_result, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A failed build's log into res, which takes it in place of the one it held. */
void lb_keep_log(cg_load_result *res, char *log);

typedef struct lb_backend {
    const char *name; /* "ze" */
    /* Resolves the driver's names once; CG_OK or CG_ENOENT with res's message. */
    int (*init)(cg_load_result *res);
    /* Appends what identifies device, driver and compiler to key, and what
     * else a loaded module depends on (its context) to memkey. */
    int (*identity)(const cg_load_request *req, lb_str *key, lb_str *memkey, cg_load_result *res);
    /* Builds from the caller's bytes (with retries). */
    int (*build)(const cg_load_request *req, lb_loaded *out, cg_load_result *res);
    /* Loads a native binary of the disk cache, with the flags it was built with. */
    int (*load_native)(const cg_load_request *req, const void *bin, size_t n, const char *flags, lb_loaded *out,
                       cg_load_result *res);
    /* The native binary of a built module (malloc'd), or CG_ENOENT when there is none worth caching. */
    int (*native_of)(const cg_load_request *req, const lb_loaded *l, void **bin, size_t *n);
    /* After every load or cache hit (CUDA's shared memory opt-in); may be NULL. */
    int (*prepare)(const cg_load_request *req, const lb_loaded *l, cg_load_result *res);
    void (*destroy)(void *module, void *kernel);
    /* Whether this request's bytes go to the disk cache. */
    int (*cacheable)(const cg_load_request *req);
} lb_backend;

extern const lb_backend lb_backend_ze, lb_backend_cl, lb_backend_cuda;

/* ---- helpers for back ends (load.c) ---- */
/* Looks name up in the global scope, else in the library opened by soname (kept open). */
void *lb_resolve(const char *soname, void **handle, const char *name);
/* "basename:size:mtime" of each loaded object whose basename starts with one
 * of prefixes (NULL-terminated), and of each sibling file named in siblings
 * found beside the first match; for the compiler identity of the key. */
void lb_objects_identity(lb_str *out, const char *const *prefixes, const char *const *siblings);
/* ---- util.c ---- */
/* Whether the whitespace-separated flags contain the option. */
int lb_has_flag(const char *flags, const char *option);
void lb_stat_add(uint64_t *counter);
extern cg_load_stats lb_stats;

/* ---- disk.c ---- */
/* CG_OK, or CG_EINVAL for a bad CALLGUARD_CACHE* value (message in res). */
int lb_disk_config(cg_load_result *res);
int lb_disk_enabled(void);
/* CALLGUARD_CACHE=off: every request as with CG_LOAD_NO_CACHE. */
int lb_cache_off(void);
/* 1: hit (payload and flags malloc'd); 0: miss; -1: a corrupt entry (reported once; removed). */
int lb_disk_get(const char *key, size_t keylen, void **payload, size_t *n, char **flags);
/* A native binary the driver refused although its checksum held: reported once, removed. */
void lb_disk_reject(const char *key, size_t keylen, const char *why);
void lb_disk_put(const char *key, size_t keylen, const void *payload, size_t n, const char *flags);

#endif
