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
 * library path it would return a shim, and the shim would call itself.
 * A layer with a real_prefix (MPI) looks a site up under that other name:
 * MPI_Send's real function is PMPI_Send, as MPI's profiling interface
 * intends for a tool. */
#define _GNU_SOURCE
#include "resolve.h"

#include "../common/errors.h"
#include "elfsym.h"
#include "probe.h"
#include "site.h"

#include <ctype.h>
#include <stddef.h>
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reader of loaded objects' tables also answers IFUNC resolvers (cg_loaded_defines), which the
 * dynamic linker may call before a sanitizer runtime is ready: not instrumented. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CGI_UNINSTRUMENTED __attribute__((no_sanitize_thread, no_sanitize_address, no_sanitize_undefined))
#else
#define CGI_UNINSTRUMENTED
#endif

/* ---- callguard's own objects -------------------------------------------------
 * The runtime, layers and shims: a resolution that lands in one of them
 * would call back into callguard. Each is kept with its load address, the
 * address ranges of its loaded segments (is an address callguard's: a few
 * comparisons, where dladdr searched the symbols of the object holding it
 * under the loader's lock: 13 us for one of libc's) and its dynamic
 * symbols. Lists that only grow, and callguard's objects are never
 * unloaded (-z nodelete): writers take cgi_registry_lock, readers (every
 * first call of a site, the program's global dlsym) walk them without a
 * lock. */
#define CGI_OWN_SEGMENTS 8

typedef struct cgi_own {
    const void *base;     /* an object's load address (dladdr's dli_fbase) */
    const cg_layer *shim; /* or a layer loaded as its soname's shim */
    unsigned nseg;
    uintptr_t seg[CGI_OWN_SEGMENTS][2]; /* its PT_LOAD segments, [from, to) */
    int has_dyn;
    cgi_dyn dyn;
    struct cgi_own *next;
} cgi_own;

static cgi_own *_Atomic cgi_own_objects;
static _Atomic unsigned cgi_own_count; /* of cgi_own_objects: tells the search's cache a new one */
static cgi_own *_Atomic cgi_shim_layers;
static pthread_mutex_t cgi_registry_lock = PTHREAD_MUTEX_INITIALIZER;

/* Adds a copy of `o` to the list, unless one has the same base and shim. */
static void cgi_own_push(cgi_own *_Atomic *list, const cgi_own *o)
{
    pthread_mutex_lock(&cgi_registry_lock);
    cgi_own *c = atomic_load(list);
    for (; c; c = c->next)
        if (c->base == o->base && c->shim == o->shim) break;
    if (!c && (c = malloc(sizeof *c))) {
        *c = *o;
        c->next = atomic_load(list);
        atomic_store_explicit(list, c, memory_order_release);
        if (list == &cgi_own_objects) atomic_fetch_add(&cgi_own_count, 1);
    }
    pthread_mutex_unlock(&cgi_registry_lock);
}

/* The object holding o->seg[0][0]: its segments and dynamic symbols. */
static int cgi_own_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    cgi_own *o = arg;
    uintptr_t addr = o->seg[0][0];
    int holds = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t from = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= from && addr < from + ph->p_memsz) holds = 1;
    }
    if (!holds) return 0;
    o->nseg = 0;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum && o->nseg < CGI_OWN_SEGMENTS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        o->seg[o->nseg][0] = info->dlpi_addr + ph->p_vaddr;
        o->seg[o->nseg][1] = o->seg[o->nseg][0] + ph->p_memsz;
        o->nseg++;
    }
    o->has_dyn = cgi_dyn_read_phdr(info, &o->dyn);
    return 1;
}

void cgi_note_own_object(const void *addr)
{
    Dl_info info;
    if (!dladdr(addr, &info) || !info.dli_fbase) return;
    cgi_own o = {.base = info.dli_fbase, .seg = {{(uintptr_t)addr}}};
    if (!dl_iterate_phdr(cgi_own_segments, &o)) o.nseg = 0;
    cgi_own_push(&cgi_own_objects, &o);
}

/* 1 when the comma-separated list names `base`. */
static int cgi_list_has(const char *list, const char *base)
{
    size_t n = strlen(base);
    for (const char *s = list;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (len == n && memcmp(s, base, n) == 0) return 1;
        if (!comma) return 0;
        s = comma + 1;
    }
}

/* A layer is loaded as a soname shim when its file is named by the vendor
 * soname (lib/callguard/shims/libOpenCL.so.1), or by one of its sonames
 * (libamdhip64.so.5, .so.6, .so.7: a shim for each). */
void cgi_note_if_shim(cg_layer *l)
{
    Dl_info info;
    if (!l->soname || !dladdr(l, &info) || !info.dli_fname) return;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (cgi_list_has(l->soname, base)) cgi_own_push(&cgi_shim_layers, &(cgi_own){.shim = l});
}

int cgi_layer_is_shim(const cg_layer *l)
{
    for (cgi_own *o = atomic_load_explicit(&cgi_shim_layers, memory_order_acquire); o; o = o->next)
        if (o->shim == l) return 1;
    return 0;
}

int cgi_is_callguard_base(const void *base)
{
    for (cgi_own *o = atomic_load_explicit(&cgi_own_objects, memory_order_acquire); o; o = o->next)
        if (o->base == base) return 1;
    return 0;
}

CGI_UNINSTRUMENTED int cgi_is_callguard_object(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    for (cgi_own *o = atomic_load_explicit(&cgi_own_objects, memory_order_acquire); o; o = o->next)
        for (unsigned i = 0; i < o->nseg; i++)
            if (a >= o->seg[i][0] && a < o->seg[i][1]) return 1;
    return 0;
}

int cgi_callguard_defines(const void *inside, const char *name, uint32_t hash)
{
    uintptr_t a = (uintptr_t)inside;
    for (cgi_own *o = atomic_load_explicit(&cgi_own_objects, memory_order_acquire); o; o = o->next)
        for (unsigned i = 0; i < o->nseg; i++)
            if (a >= o->seg[i][0] && a < o->seg[i][1]) {
                uint32_t at = 0;
                return !o->has_dyn || cgi_dyn_next(&o->dyn, name, hash, &at);
            }
    return 1;
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
    while (v && strcmp(v->var, var) != 0)
        v = v->next;
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

/* Is base the load address of one of callguard's objects? Reads only the
 * list (no dladdr): safe inside a dl_iterate_phdr callback. */
CGI_UNINSTRUMENTED static int cgi_is_own_base(const void *base)
{
    for (cgi_own *o = atomic_load_explicit(&cgi_own_objects, memory_order_acquire); o; o = o->next)
        if (o->base == base) return 1;
    return 0;
}

/* ---- a loaded object's own definition of a name ------------------------------
 * Read from the object's dynamic symbol table in memory (elfsym.h), as the
 * dynamic linker's own lookup reads it: a defined function (or untyped)
 * symbol, global or weak, not of a hidden version. This is what dlsym on a
 * handle of the object finds first, without dlopen, dlsym's formatted error
 * for every object that lacks the name, and dlclose: a first call used to
 * cost ~400,000 instructions in a Python process with a hundred objects
 * mapped. What this reader does not handle (no GNU hash table, an IFUNC)
 * is left to dlsym ("unsure"). */

/* 1: found (*addr), 0: not defined there, -1: unsure (ask dlsym). */
CGI_UNINSTRUMENTED static int cgi_own_definition(const cgi_dyn *d, const char *name, uint32_t hash, void **addr)
{
    for (uint32_t at = 0, i; (i = cgi_dyn_next(d, name, hash, &at));) {
        const ElfW(Sym) *sym = &d->symtab[i];
        if (d->versym && ((d->versym[i] & 0x7fff) == 0 || (d->versym[i] & 0x8000))) continue;
        int type = ELF64_ST_TYPE(sym->st_info), bind = ELF64_ST_BIND(sym->st_info);
        if (bind != STB_GLOBAL && bind != STB_WEAK && bind != STB_GNU_UNIQUE) continue;
        if (type == STT_GNU_IFUNC) return -1;
        if (type == STT_FUNC || type == STT_NOTYPE) {
            *addr = (void *)(d->base + sym->st_value);
            return 1;
        }
    }
    return 0;
}

/* What the search reads of each loaded object, in dl_iterate_phdr's order:
 * whether it is callguard's, where its symbols are. Kept while no object is
 * loaded or unloaded (dlpi_adds, dlpi_subs) and callguard notes none of its
 * own: a search then reads only the objects' hash tables (a failed global
 * look-up of a layer's name cost 3 times glibc's own, each object's
 * program headers and dynamic section read again). Under cgi_seen_lock,
 * taken with trylock: a search that finds it held (another thread's, or
 * this thread's inside a program's own dl_iterate_phdr callback) reads the
 * objects itself. */
typedef struct cgi_seen {
    uintptr_t addr;
    int own, has_dyn;
    cgi_dyn dyn;
} cgi_seen;

static struct {
    unsigned long long adds, subs;
    unsigned owns;
    size_t n, cap;
    cgi_seen *v;
} cgi_seen_cache;
static pthread_mutex_t cgi_seen_lock = PTHREAD_MUTEX_INITIALIZER;

/* dl_iterate_phdr runs its callback under the dynamic loader's lock: no
 * dlopen/dlclose in there (another thread in dlopen would deadlock with
 * us). The walk stops at the first object that defines the name; objects
 * before it that the reader was unsure of are looked up afterwards, in
 * order, with dlopen(RTLD_NOLOAD) and dlsym. */
typedef struct cgi_search {
    const char *name;
    uint32_t hash;
    int with_main; /* the main program too */
    int cached;    /* holds cgi_seen_lock */
    size_t i;      /* the object's place in the walk */
    void *found;
    char **unsure; /* names of objects before `found` to ask dlsym */
    size_t n, cap;
} cgi_search;

/* The object as the cache has it, reading it where the cache does not. */
static const cgi_seen *cgi_seen_object(cgi_search *s, const struct dl_phdr_info *info, size_t size, cgi_seen *tmp)
{
    size_t i = s->i++;
    if (s->cached && i == 0) {
        unsigned owns = atomic_load(&cgi_own_count);
        if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
            s->cached = 0;
        else if (cgi_seen_cache.adds != info->dlpi_adds || cgi_seen_cache.subs != info->dlpi_subs ||
                 cgi_seen_cache.owns != owns) {
            cgi_seen_cache.adds = info->dlpi_adds, cgi_seen_cache.subs = info->dlpi_subs;
            cgi_seen_cache.owns = owns, cgi_seen_cache.n = 0;
        }
    }
    if (s->cached && i < cgi_seen_cache.n && cgi_seen_cache.v[i].addr == info->dlpi_addr) return &cgi_seen_cache.v[i];
    tmp->addr = info->dlpi_addr;
    tmp->own = cgi_is_own_base((const void *)info->dlpi_addr);
    tmp->has_dyn = cgi_dyn_read_phdr(info, &tmp->dyn);
    if (!s->cached || i > cgi_seen_cache.n) return tmp;
    if (i == cgi_seen_cache.cap) {
        size_t cap = cgi_seen_cache.cap ? 2 * cgi_seen_cache.cap : 64;
        cgi_seen *v = realloc(cgi_seen_cache.v, cap * sizeof *v);
        if (!v) return tmp;
        cgi_seen_cache.v = v, cgi_seen_cache.cap = cap;
    }
    cgi_seen_cache.v[i] = *tmp;
    cgi_seen_cache.n = i + 1;
    return tmp;
}

static int cgi_search_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    cgi_search *s = arg;
    cgi_seen tmp;
    const cgi_seen *o = cgi_seen_object(s, info, size, &tmp);
    int main_program = !info->dlpi_name || !info->dlpi_name[0];
    if ((main_program && !s->with_main) || o->own) return 0;
    void *p = NULL;
    int r = !o->has_dyn                            ? -1
            : cgi_dyn_may_define(&o->dyn, s->hash) ? cgi_own_definition(&o->dyn, s->name, s->hash, &p)
                                                   : 0;
    if (main_program && r < 0) r = 0; /* dlopen has no name for it */
    if (r > 0) {
        s->found = p;
        return 1;
    }
    if (r == 0) return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        char **names = realloc(s->unsure, cap * sizeof *names);
        if (!names) return 1;
        s->unsure = names, s->cap = cap;
    }
    s->unsure[s->n] = strdup(info->dlpi_name);
    if (s->unsure[s->n]) s->n++;
    return 0;
}

static void *cgi_search_in(const char *name, uint32_t hash, int with_main)
{
    cgi_search s = {.name = name, .hash = hash, .with_main = with_main};
    int locked = s.cached = pthread_mutex_trylock(&cgi_seen_lock) == 0;
    dl_iterate_phdr(cgi_search_object, &s);
    if (locked) pthread_mutex_unlock(&cgi_seen_lock);
    void *found = NULL;
    for (size_t i = 0; i < s.n; i++) {
        if (!found) {
            void *h = cgi_probe_open(s.unsure[i], RTLD_LAZY | RTLD_NOLOAD);
            if (h) {
                void *p = cgi_probe_sym(h, name);
                dlclose(h);
                if (p && !cgi_is_callguard_object(p)) found = p;
            }
        }
        free(s.unsure[i]);
    }
    free(s.unsure);
    if (!found) found = s.found;
    /* Defined in a library but part of callguard all the same (a layer
     * linked into another object): not the real function. */
    return found && !cgi_is_callguard_object(found) ? found : NULL;
}

/* The main program is step 1's (dlsym(RTLD_NEXT) from the layer). */
void *cgi_search_loaded(const char *name) { return cgi_search_in(name, cgi_gnu_hash(name), 0); }

int cgi_defined_outside_callguard(const char *name, uint32_t hash, int with_main)
{
    return cgi_search_in(name, hash, with_main) != NULL;
}

/* cg_loaded_defines: an IFUNC resolver's question, asked while the dynamic
 * linker relocates an object (possibly before any constructor ran): only
 * dl_iterate_phdr and reads of the objects' tables, no dlopen, no malloc. */
typedef struct cgi_defines {
    const char *name;
    uint32_t hash;
    const void *self;
    int found;
} cgi_defines;

CGI_UNINSTRUMENTED static int cgi_defines_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    cgi_defines *d = arg;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, self = (uintptr_t)d->self;
        if (ph->p_type == PT_LOAD && self >= lo && self < lo + ph->p_memsz) return 0; /* the asking object */
    }
    if (cgi_is_own_base((const void *)info->dlpi_addr)) return 0;
    void *p = NULL;
    cgi_dyn dyn;
    /* unsure (no table it can read, an IFUNC) counts as defined */
    d->found = !cgi_dyn_read_phdr(info, &dyn) || cgi_own_definition(&dyn, d->name, d->hash, &p) != 0;
    return d->found;
}

CGI_UNINSTRUMENTED int cg_loaded_defines(const char *name, const void *self)
{
    cgi_defines d = {.name = name, .hash = cgi_gnu_hash(name), .self = self};
    dl_iterate_phdr(cgi_defines_object, &d);
    return d.found;
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
            if (asprintf(&dep, "libcallguard-real-%s.so", l->api) > 0) h = cgi_probe_open(dep, RTLD_LAZY | RTLD_NOLOAD);
            free(dep);
        } else {
            const char *path = cgi_library_given(l);
            if (path) {
                /* The user's choice: a file that is not the API's library is a
                 * bad setting (exit 2), not a library that is merely missing. */
                h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
                if (!h) cgi_die("%s=%s: cannot load it as a shared library: %s", l->library_env, path, dlerror());
                char real[CGI_NAME_MAX + 16];
                snprintf(real, sizeof real, "%s%s", l->real_prefix ? l->real_prefix : "",
                         l->nsites ? l->sites[0].name : "");
                void *first = l->nsites ? dlsym(h, real) : h;
                if (!first || cgi_is_callguard_object(first))
                    cgi_die("%s=%s: %s %s, the first entry point of the %s API: expected the real library",
                            l->library_env, path, first ? "is callguard's own file, which forwards" : "does not define",
                            real, l->api);
            } else if (l->library_path && l->library_path[0] == '/') {
                h = cgi_probe_open(l->library_path, RTLD_LAZY | RTLD_LOCAL);
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
        p = h ? cgi_probe_sym(h, name) : NULL;
        if (p && !cgi_is_callguard_object(p)) return p;
        goto missing;
    }
    p = l->dlsym_next ? l->dlsym_next(name) : dlsym(RTLD_NEXT, name);
    if (!p) (void)dlerror(); /* a probe's failure is not the program's (probe.h) */
    if (p && !cgi_is_callguard_object(p)) return p;

    p = cgi_search_loaded(name);
    if (p) return p;

    void *h = cgi_open_library(l);
    if (h) {
        p = cgi_probe_sym(h, name);
        if (p && !cgi_is_callguard_object(p)) return p;
    }

missing:
    /* Once per layer: every other entry point of it is missing too. */
    if (!atomic_exchange(&l->warned, 1)) {
        const char *env = cgi_library_given(l);
        cgi_say("cannot find the real %s (%s API, %s%s); every call returns %s. "
                "Set %s to the library's absolute path",
                name, l->api, env ? "tried " : "library ", env ? env : l->soname,
                l->result_name && l->result_name(l->missing_result) ? l->result_name(l->missing_result) : "an error",
                l->library_env);
    }
    return NULL;
}

void *cgi_resolve_site(cg_layer *l, const char *name)
{
    if (!l->real_prefix) return cgi_resolve(l, name);
    char real[CGI_NAME_MAX + 16];
    int n = snprintf(real, sizeof real, "%s%s", l->real_prefix, name);
    return n > 0 && (size_t)n < sizeof real ? cgi_resolve(l, real) : NULL;
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

void cgi_symbol_bounds(const char *name, uintptr_t *lo, uintptr_t *hi)
{
    *lo = *hi = 0;
    void *p = cgi_probe_sym(RTLD_DEFAULT, name);
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (p && dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size)
        *lo = (uintptr_t)p, *hi = (uintptr_t)p + sym->st_size;
}
