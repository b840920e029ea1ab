/* util.c: allocation, string and error helpers of callguard-gen, and freeing
 * what parse.c and check.c build. The generator is a
 * short-lived build tool: running out of memory ends it. */
#include "gen.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "callguard-gen: out of memory\n");
        exit(1);
    }
    return p;
}

char *xstrndup(const char *s, size_t n)
{
    char *d = xrealloc(NULL, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *xstrdup(const char *s) { return s ? xstrndup(s, strlen(s)) : NULL; }

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

void strlist_push(strlist *l, const char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = xstrdup(s);
}

void strlist_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

void gen_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void gen_func_free(gen_func *f)
{
    for (size_t j = 0; j < f->nparams; j++) {
        free(f->params[j].name);
        free(f->params[j].decl);
        free(f->params[j].frame_decl);
    }
    free(f->params);
    free(f->name);
    free(f->ret);
    free(f->ret_member);
    free(f->callconv);
    free(f->origin);
    free(f->decl_head);
    free(f->guarded_head);
    free(f->slow_head);
    free(f->general_head);
    free(f->wrapper_head);
    free(f->base);
    free(f->rules);
    for (size_t i = 0; i < f->nwaits; i++)
        free(f->waits[i].as);
    free(f->waits);
}

void gen_api_free(gen_api *api)
{
    for (size_t i = 0; i < api->nfuncs; i++)
        gen_func_free(&api->funcs[i]);
    free(api->funcs);
    strlist_free(&api->passthrough);
    strlist_free(&api->fn_macros);
    for (size_t i = 0; i < api->ncodes; i++)
        free(api->codes[i].name);
    free(api->codes);
    for (size_t i = 0; i < api->nnames; i++)
        free(api->names[i].name);
    free(api->names);
    for (size_t i = 0; i < api->nenums; i++) {
        for (size_t k = 0; k < api->enums[i].n; k++)
            free(api->enums[i].v[k].name);
        free(api->enums[i].v);
        free(api->enums[i].type);
    }
    free(api->enums);
    memset(api, 0, sizeof *api);
}
