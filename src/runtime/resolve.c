/* Finding the real function behind a wrapper, once per site, before any
 * lock or runtime transition. In order:
 *   1. dlsym(RTLD_NEXT) from the layer's own object, unless it lands in one
 *      of callguard's objects;
 *   2. a library already loaded that defines the name and is not callguard's
 *      (a Python extension's libOpenCL.so.1 is loaded RTLD_LOCAL: invisible
 *      to RTLD_NEXT, found here);
 *   3. the absolute path in CALLGUARD_<API>_LIBRARY, or the one found for the
 *      soname when callguard was built.
 * A soname shim looks only in its own dependency libcallguard-real-<api>.so,
 * which `callguard run` links to the real library chosen for the run.
 * Never dlopen a bare vendor soname: with callguard's shims first on the
 * library path it would return a shim, and the shim would call itself. */
#define _GNU_SOURCE
#include "resolve.h"

#include "errors.h"
#include "site.h"

#include <ctype.h>
#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

/* ---- callguard's own objects -------------------------------------------------
 * Load addresses of the runtime, layers and shims: a resolution that lands
 * in one of them would call back into callguard. Lists that only grow:
 * writers take cgi_registry_lock, readers (every first call of a site) walk them
 * without a lock. */
typedef struct cgi_own {
    const void *base;  /* an object's load address */
    const cg_layer *shim; /* or a layer loaded as its soname's shim */
    struct cgi_own *next;
} cgi_own;

static cgi_own *_Atomic cgi_own_objects;
static cgi_own *_Atomic cgi_shim_layers;
static pthread_mutex_t cgi_registry_lock = PTHREAD_MUTEX_INITIALIZER;

static void cgi_own_push(cgi_own *_Atomic *list, const void *base, const cg_layer *shim)
{
    pthread_mutex_lock(&cgi_registry_lock);
    cgi_own *o = atomic_load(list);
    for (; o; o = o->next)
        if (o->base == base && o->shim == shim) break;
    if (!o && (o = calloc(1, sizeof *o))) {
        o->base = base;
        o->shim = shim;
        o->next = atomic_load(list);
        atomic_store_explicit(list, o, memory_order_release);
    }
    pthread_mutex_unlock(&cgi_registry_lock);
}

void cgi_note_own_object(const void *addr)
{
    Dl_info info;
    if (dladdr(addr, &info) && info.dli_fbase) cgi_own_push(&cgi_own_objects, info.dli_fbase, NULL);
}

/* A layer is loaded as a soname shim when its file is named by the vendor
 * soname (lib/callguard/shims/libOpenCL.so.1). */
void cgi_note_if_shim(cg_layer *l)
{
    Dl_info info;
    if (!l->soname || !dladdr(l, &info) || !info.dli_fname) return;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (strcmp(base, l->soname) == 0) cgi_own_push(&cgi_shim_layers, NULL, l);
}

int cgi_layer_is_shim(const cg_layer *l)
{
    for (cgi_own *o = atomic_load_explicit(&cgi_shim_layers, memory_order_acquire); o; o = o->next)
        if (o->shim == l) return 1;
    return 0;
}

int cgi_is_callguard_object(const void *addr)
{
    Dl_info info;
    if (!dladdr(addr, &info)) return 0;
    for (cgi_own *o = atomic_load_explicit(&cgi_own_objects, memory_order_acquire); o; o = o->next)
        if (o->base == info.dli_fbase) return 1;
    return 0;
}

/* ---- library paths given through cg_configure -----------------------------------
 * CALLGUARD_<API>_LIBRARY from the C API: kept here, read before the
 * environment's value. */
typedef struct cgi_libvar {
    char *var, *path;
    struct cgi_libvar *next;
} cgi_libvar;

static cgi_libvar *cgi_libvars; /* under cgi_registry_lock */

void cgi_library_set(const char *var, const char *path)
{
    pthread_mutex_lock(&cgi_registry_lock);
    cgi_libvar *v = cgi_libvars;
    while (v && strcmp(v->var, var) != 0) v = v->next;
    if (!v && (v = calloc(1, sizeof *v)) && (v->var = strdup(var))) {
        v->next = cgi_libvars;
        cgi_libvars = v;
    }
    if (v && v->var) {
        char *p = strdup(path);
        if (p) v->path = p; /* the old value is not freed: a reader may hold it */
    }
    pthread_mutex_unlock(&cgi_registry_lock);
}

/* The real library's path a user gave for this layer; NULL if none. Valid
 * for the life of the process (replaced values are never freed). */
static const char *cgi_library_given(const cg_layer *l)
{
    if (!l->library_env) return NULL;
    const char *path = NULL;
    pthread_mutex_lock(&cgi_registry_lock);
    for (cgi_libvar *v = cgi_libvars; v; v = v->next)
        if (strcmp(v->var, l->library_env) == 0) path = v->path;
    pthread_mutex_unlock(&cgi_registry_lock);
    /* secure_getenv: a setuid program must not load a library its caller names. */
    if (!path) path = secure_getenv(l->library_env);
    return path && *path ? path : NULL;
}

/* ---- finding the real function ------------------------------------------------ */

/* dl_iterate_phdr runs its callback under the dynamic loader's lock: no
 * dlopen/dlclose in there (another thread in dlopen would deadlock with
 * us). Collect the objects' names first, look them up afterwards. */
typedef struct cgi_objects {
    char **names;
    size_t n, cap;
} cgi_objects;

static int cgi_collect_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    cgi_objects *o = arg;
    if (!info->dlpi_name || !info->dlpi_name[0]) return 0; /* the main program: step 1 covered it */
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 32;
        char **names = realloc(o->names, cap * sizeof *names);
        if (!names) return 1;
        o->names = names, o->cap = cap;
    }
    o->names[o->n] = strdup(info->dlpi_name);
    if (o->names[o->n]) o->n++;
    return 0;
}

static void *cgi_search_loaded(const char *name)
{
    cgi_objects o = {0};
    dl_iterate_phdr(cgi_collect_object, &o);
    void *found = NULL;
    for (size_t i = 0; i < o.n; i++) {
        if (!found) {
            void *h = dlopen(o.names[i], RTLD_LAZY | RTLD_NOLOAD);
            if (h) {
                void *p = dlsym(h, name);
                dlclose(h);
                if (p && !cgi_is_callguard_object(p)) found = p;
            }
        }
        free(o.names[i]);
    }
    free(o.names);
    return found;
}

static void *cgi_open_library(cg_layer *l)
{
    /* l->priv caches the handle; opened once. Not under cgi_cfg_lock: dlopen
     * runs constructors, which may register layers and take that lock. */
    static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&open_lock);
    void *h = l->priv;
    if (!h) {
        if (cgi_layer_is_shim(l)) {
            /* The shim's DT_NEEDED, loaded with it: found by that name. */
            char *dep = NULL;
            if (asprintf(&dep, "libcallguard-real-%s.so", l->api) > 0) h = dlopen(dep, RTLD_LAZY | RTLD_NOLOAD);
            free(dep);
        } else {
            const char *path = cgi_library_given(l);
            if (path) {
                /* The user's choice: a file that is not the API's library is a
                 * bad setting (exit 2), not a library that is merely missing. */
                h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
                if (!h) cgi_die("%s=%s: cannot load it as a shared library: %s", l->library_env, path, dlerror());
                void *first = l->nsites ? dlsym(h, l->sites[0].name) : h;
                if (!first || cgi_is_callguard_object(first))
                    cgi_die("%s=%s: %s %s, the first entry point of the %s API: expected the real library",
                            l->library_env, path, first ? "is callguard's own file, which forwards" : "does not define",
                            l->sites[0].name, l->api);
            } else if (l->library_path && l->library_path[0] == '/') {
                h = dlopen(l->library_path, RTLD_LAZY | RTLD_LOCAL);
            }
        }
        l->priv = h ? h : (void *)-1;
    }
    pthread_mutex_unlock(&open_lock);
    return h == (void *)-1 ? NULL : h;
}

void *cgi_resolve(cg_layer *l, const char *name)
{
    /* A shim has taken the vendor's soname, so the real library is not
     * loaded under it: what the first two steps would find is some other
     * interposer, and one that forwards with RTLD_NEXT lands back in the
     * shim, forever. A shim looks in its real library and nowhere else. */
    void *p;
    if (cgi_layer_is_shim(l)) {
        void *h = cgi_open_library(l);
        p = h ? dlsym(h, name) : NULL;
        if (p && !cgi_is_callguard_object(p)) return p;
        goto missing;
    }
    p = l->dlsym_next ? l->dlsym_next(name) : dlsym(RTLD_NEXT, name);
    if (p && !cgi_is_callguard_object(p)) return p;

    p = cgi_search_loaded(name);
    if (p) return p;

    void *h = cgi_open_library(l);
    if (h) {
        p = dlsym(h, name);
        if (p && !cgi_is_callguard_object(p)) return p;
    }

missing:
    /* Once per layer: every other entry point of it is missing too. */
    if (!atomic_exchange(&l->warned, 1)) {
        const char *env = cgi_library_given(l);
        fprintf(stderr,
                "callguard: cannot find the real %s (%s API, %s%s); every call returns %s. "
                "Set %s to the library's absolute path\n",
                name, l->api, env ? "tried " : "library ", env ? env : l->soname,
                l->result_name && l->result_name(l->missing_result) ? l->result_name(l->missing_result) : "an error",
                l->library_env);
    }
    return NULL;
}

/* What a pass-through name runs when the real library is missing: the
 * layer's own stub, which returns its missing_result (its prototype is
 * unknown: that is all it can do). A layer that has none gets 0. */
static long cgi_missing_unknown(void) { return 0; }

void *cg_resolve_passthrough(cg_layer *l, const char *name)
{
    void *p = cgi_resolve(l, name);
    if (p) return p;
    return l->passthrough_missing ? (void *)l->passthrough_missing : (void *)cgi_missing_unknown;
}
