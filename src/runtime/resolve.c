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

/* Load addresses of callguard's own objects (the runtime, layers, shims):
 * a resolution that lands in one of them would call back into callguard. */
#define CGI_MAX_OWN 16
static void *cgi_own[CGI_MAX_OWN];
static _Atomic int cgi_nown;

void cgi_note_own_object(const void *addr)
{
    Dl_info info;
    if (!dladdr(addr, &info) || !info.dli_fbase) return;
    int n = atomic_load(&cgi_nown);
    for (int i = 0; i < n; i++)
        if (cgi_own[i] == info.dli_fbase) return;
    if (n < CGI_MAX_OWN) {
        cgi_own[n] = info.dli_fbase;
        atomic_store(&cgi_nown, n + 1);
    }
}

/* Layers loaded as soname shims: the file is named by the vendor soname
 * (lib/callguard/shims/libOpenCL.so.1). */
static cg_layer *cgi_shims[CGI_MAX_OWN];
static _Atomic int cgi_nshims;

void cgi_note_if_shim(cg_layer *l)
{
    Dl_info info;
    if (!l->soname || !dladdr(l, &info) || !info.dli_fname) return;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    int n = atomic_load(&cgi_nshims);
    if (strcmp(base, l->soname) == 0 && n < CGI_MAX_OWN) {
        cgi_shims[n] = l;
        atomic_store(&cgi_nshims, n + 1);
    }
}

int cgi_layer_is_shim(const cg_layer *l)
{
    int n = atomic_load(&cgi_nshims);
    for (int i = 0; i < n; i++)
        if (cgi_shims[i] == l) return 1;
    return 0;
}

int cgi_is_callguard_object(const void *addr)
{
    Dl_info info;
    if (!dladdr(addr, &info)) return 0;
    int n = atomic_load(&cgi_nown);
    for (int i = 0; i < n; i++)
        if (cgi_own[i] == info.dli_fbase) return 1;
    return 0;
}

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
            const char *path = getenv(l->library_env);
            if (!path || !*path) path = l->library_path;
            if (path && path[0] == '/') h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
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
        const char *env = getenv(l->library_env);
        fprintf(stderr,
                "callguard: cannot find the real %s (%s API, %s%s); every call returns %s. "
                "Set %s to the library's absolute path\n",
                name, l->api, env && *env ? "tried " : "library ", env && *env ? env : l->soname,
                l->result_name && l->result_name(l->missing_result) ? l->result_name(l->missing_result) : "an error",
                l->library_env);
    }
    return NULL;
}

/* What a pass-through name runs when the real library is missing. Its
 * prototype is unknown, so all it can do is return the layer's
 * missing_result; one stub per layer (there are at most a few layers). */
#define CGI_MISSING_STUBS 8
static long cgi_missing_value[CGI_MISSING_STUBS];
static cg_layer *cgi_missing_layer[CGI_MISSING_STUBS];
#define CGI_MISSING_STUB(k)                                                                                             \
    static long cgi_missing_##k(void) { return cgi_missing_value[k]; }
CGI_MISSING_STUB(0)
CGI_MISSING_STUB(1)
CGI_MISSING_STUB(2)
CGI_MISSING_STUB(3)
CGI_MISSING_STUB(4)
CGI_MISSING_STUB(5)
CGI_MISSING_STUB(6)
CGI_MISSING_STUB(7)
static long (*const cgi_missing_stub[CGI_MISSING_STUBS])(void) = {cgi_missing_0, cgi_missing_1, cgi_missing_2,
                                                                 cgi_missing_3, cgi_missing_4, cgi_missing_5,
                                                                 cgi_missing_6, cgi_missing_7};

void *cg_resolve_passthrough(cg_layer *l, const char *name)
{
    void *p = cgi_resolve(l, name);
    if (p) return p;
    pthread_mutex_lock(&cgi_cfg_lock);
    int k = 0;
    while (k < CGI_MISSING_STUBS - 1 && cgi_missing_layer[k] && cgi_missing_layer[k] != l) k++;
    cgi_missing_layer[k] = l;
    cgi_missing_value[k] = l->missing_result;
    pthread_mutex_unlock(&cgi_cfg_lock);
    return (void *)cgi_missing_stub[k];
}
