/* Finding the real library (resolve.c), and the registry of callguard's own
 * objects that keeps a resolution from landing back in callguard. */
#ifndef CGI_RESOLVE_H
#define CGI_RESOLVE_H

#include "internal.h"

CGI_HIDDEN void *cgi_resolve(cg_layer *layer, const char *name);
/* The real function of the layer's entry point `name` (its real_prefix applied). */
CGI_HIDDEN void *cgi_resolve_site(cg_layer *layer, const char *name);
/* The definition of `name` in a loaded object that is not callguard's
 * (step 2 of the resolution, resolve.c), or NULL. */
CGI_HIDDEN void *cgi_search_loaded(const char *name);
/* Whether a loaded object that is not callguard's defines the function
 * `name` (hash: cgi_gnu_hash's; the main program too, with with_main).
 * Takes the loader's lock. */
CGI_HIDDEN int cgi_defined_outside_callguard(const char *name, uint32_t hash, int with_main);
/* Records the object holding addr as one of callguard's (runtime, layer,
 * shim): its segments' addresses and its dynamic symbols. */
CGI_HIDDEN void cgi_note_own_object(const void *addr);
/* Is addr in one of callguard's objects: comparisons only, no loader call,
 * not instrumented (dlsym_interpose.c calls it while a sanitizer starts). */
CGI_HIDDEN int cgi_is_callguard_object(const void *addr);
/* Might the callguard object holding `inside` (a layer's cg_layer) define
 * `name` (hash: cgi_gnu_hash's)? Read from its dynamic symbols in memory,
 * no loader call; 1 too when that cannot tell. */
CGI_HIDDEN int cgi_callguard_defines(const void *inside, const char *name, uint32_t hash);
/* The same for an object's load address (dladdr's dli_fbase). */
CGI_HIDDEN int cgi_is_callguard_base(const void *base);
/* Records the layer as its vendor library's soname shim, when its file is named by the soname. */
CGI_HIDDEN void cgi_note_if_shim(cg_layer *l);
CGI_HIDDEN int cgi_layer_is_shim(const cg_layer *l);
/* Where the data object `name` (a global symbol of a loaded object) lies:
 * [*lo, *hi), or 0 and 0 when it is not found or has no size. Takes the
 * loader's lock (dlsym): never on the watchdog. */
CGI_HIDDEN void cgi_symbol_bounds(const char *name, uintptr_t *lo, uintptr_t *hi);
/* CALLGUARD_<API>_LIBRARY given through cg_configure: wins over the environment. */
CGI_HIDDEN void cgi_library_set(const char *var, const char *path);

#endif
