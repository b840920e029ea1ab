/* callguard/layer.h: the contract between a generated API layer and
 * libcallguard. Generated code includes this; programs that only use
 * callguard's C API include callguard/callguard.h instead.
 *
 * A layer is a table of sites (one per entry point) and one exported wrapper
 * per entry point. The wrapper's fast path is a single load:
 *
 *     fn = atomic_load(&site->direct);  if (fn) return fn(args...);
 *
 * `direct` holds the real function only while the site has nothing to do
 * (resolved, no statistics, no lock, no runtime transition). Otherwise the
 * wrapper packs its arguments into a frame and calls cg_call(), which does
 * the nesting check, the lock, the runtime transition and the bookkeeping,
 * and calls back the generated thunk to make the real call.
 */
#ifndef CALLGUARD_LAYER_H
#define CALLGUARD_LAYER_H

#include <stdatomic.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is exported from libcallguard, whatever the
 * visibility the including code builds with. */
#pragma GCC visibility push(default)

#define CG_LAYER_ABI 1

#define CG_EXPORT __attribute__((visibility("default")))
#define CG_LIKELY(x) __builtin_expect(!!(x), 1)

struct cg_counters;
struct cg_layer;

/* Calls the real function with the frame's arguments, stores the result in
 * the frame, and returns nonzero when the result is an error. */
typedef int (*cg_thunk)(void *frame);

typedef struct cg_site {
    _Atomic(void *) direct;          /* real function when the site is idle, else NULL */
    _Atomic(void *) real;            /* the resolved real function (NULL until resolved) */
    const char *name;                /* the header's spelling */
    struct cg_layer *layer;
    /* policy, changed at run time without a lock on the read side */
    _Atomic uint32_t transition;     /* enum cg_transition */
    _Atomic uint32_t domain;         /* 0 = not serialized, else domain id + 1 */
    _Atomic uint32_t scope;          /* enum cg_scope */
    _Atomic uint32_t blocking;       /* 1 if the policy marks the site blocking */
    const char *reason;              /* why it is blocking (static or interned) */
    struct cg_counters *ctr;         /* this site's statistics record */
    uint32_t base;                   /* index of the site whose policy/row this shares (itself if none) */
    uint32_t index;
} cg_site;

/* Default policy of one site, as the generator wrote it. */
typedef struct cg_site_default {
    const char *name;
    const char *base;                /* NULL, or the site whose policy and row a variant shares */
    uint8_t transition;              /* enum cg_transition */
    uint8_t blocking;
    uint8_t scope;                   /* enum cg_scope */
    const char *reason;
    const char *serialize;           /* NULL or a domain name */
} cg_site_default;

typedef struct cg_layer {
    int abi;                         /* CG_LAYER_ABI */
    const char *api;                 /* "cl", "ze", "cuda", "toy" */
    const char *prefixes;            /* comma-separated name prefixes: "ze,zet,zes" */
    const char *soname;              /* the vendor library's soname */
    const char *library_env;         /* "CALLGUARD_CL_LIBRARY" */
    const char *library_path;        /* absolute path found at build time, or NULL */
    const char *header;              /* header the layer was generated from */
    long missing_result;             /* what every call returns when the real library is missing */
    const char *(*result_name)(long);/* names a result code; NULL if unknown */
    unsigned nsites;
    cg_site *sites;
    const cg_site_default *defaults;
    const char *const *passthrough;  /* names forwarded without a guard (NULL-terminated), may be NULL */
    /* dlsym(RTLD_NEXT, name) made from inside the layer's own object, so
     * "next" means next after the layer, not after libcallguard. May be NULL. */
    void *(*dlsym_next)(const char *name);
    /* filled in by the runtime */
    void *priv;
    struct cg_layer *next;
    _Atomic int warned;              /* the missing-library message was printed */
} cg_layer;

/* Called from the layer's constructor. Safe to call before main. */
void cg_layer_register(cg_layer *layer);

/* The slow path. Returns 0 when the thunk ran, -1 when the real function
 * could not be found (the wrapper then returns layer->missing_result). */
int cg_call(cg_site *site, const void *key, cg_thunk thunk, void *frame);

/* Resolves the real function of a pass-through name (never NULL: a stub that
 * reports the missing library is returned instead). */
void *cg_resolve_passthrough(cg_layer *layer, const char *name);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
