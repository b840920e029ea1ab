/* From real functions and names to a layer's guarded wrappers, for
 * hand-written resolvers: CUDA's cuGetProcAddress returns pointers into
 * the real library, each the start of one of its exports, which must be
 * handed back as the layer's wrapper of that export or the caller bypasses
 * the layer. The layer's table (cg_layer.wrappers) holds each site's
 * wrapper; a linear search is enough for the few hundred lookups a program
 * makes, once each. */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>
#include <string.h>

void *cg_wrapper_by_name(const cg_layer *l, const char *name)
{
    if (!l || !l->wrappers || !name) return NULL;
    for (unsigned i = 0; i < l->nsites; i++)
        if (strcmp(l->defaults[i].name, name) == 0) return l->wrappers[i];
    return NULL;
}

void *cg_wrapper_by_address(const cg_layer *l, void *real)
{
    if (!real) return NULL;
    Dl_info info;
    if (!dladdr(real, &info) || info.dli_saddr != real || !info.dli_sname) return real;
    void *w = cg_wrapper_by_name(l, info.dli_sname);
    return w ? w : real;
}
