/* values.c: the names of an API's values for the timeline, as text: the
 * comment that heads a block of #defines (OpenCL's `/ * cl_device_info * /`),
 * a type's list of names, and the policy's outputs. parse.c reads the
 * header and calls these. */
#include "gen.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* The comment heading a block of #defines, as OpenCL's header names the
 * type of the values below it: a line `/ * cl_device_info * /` or `/ * cl_mem_flags and
 * cl_svm_mem_flags - bitfield * /`. Walking up from a macro's line over other
 * #define, #if and comment lines; a blank line ends the block. */
char *gen_block_heading(const char *text, size_t size, unsigned line)
{
    /* Line starts, up to `line`. */
    const char *at = text, *end = text + size;
    const char *starts[4096];
    unsigned n = 0;
    for (unsigned l = 1; at < end && l <= line; l++) {
        starts[n++ % 4096] = at;
        const char *nl = memchr(at, '\n', (size_t)(end - at));
        at = nl ? nl + 1 : end;
    }
    if (n < 2) return NULL;
    for (unsigned back = 2; back <= n && back < 4096; back++) {
        const char *b = starts[(n - back) % 4096];
        const char *e = memchr(b, '\n', (size_t)(end - b));
        if (!e) e = end;
        while (b < e && (*b == ' ' || *b == '\t'))
            b++;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            e--;
        if (b == e) return NULL; /* a blank line: the block began below it */
        if (*b == '#') continue;
        if (e - b < 6 || strncmp(b, "/*", 2) != 0 || strncmp(e - 2, "*/", 2) != 0) return NULL;
        /* A comment: a heading when it is identifiers joined by `and`, maybe `- bitfield`. */
        char *t = xstrndup(b + 2, (size_t)(e - b - 4));
        char *p = t;
        while (*p == ' ')
            p++;
        for (char *z = p + strlen(p); z > p && z[-1] == ' ';)
            *--z = '\0';
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';
        for (const char *q = p; ok && *q; q++)
            ok = (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_' ||
                 *q == ' ' || *q == '-';
        if (ok && (strstr(p, " reserved") || (strchr(p, ' ') && !strstr(p, " and ") && !strstr(p, " - "))))
            ok = 0; /* `Error Codes`, a note: not a type */
        if (!ok) {
            free(t);
            continue;
        }
        char *r = xstrdup(p);
        free(t);
        return r;
    }
    return NULL;
}

/* Does heading `g` (`cl_a and cl_b`, no `bitfield`) name type `t`? */
int gen_group_names(const char *g, const char *t)
{
    if (!g || strstr(g, "bitfield")) return 0;
    size_t n = strlen(t);
    for (const char *p = g; (p = strstr(p, t)) != NULL; p += n)
        if ((p == g || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) return 1;
    return 0;
}

static int by_value(const void *a, const void *b)
{
    const gen_code *x = a, *y = b;
    return x->value < y->value ? -1 : x->value > y->value;
}

void gen_enum_sort(gen_enum *e)
{
    if (e->n) qsort(e->v, e->n, sizeof *e->v, by_value);
}

void gen_enum_add(gen_enum *e, const char *name, long long value)
{
    for (size_t i = 0; i < e->n; i++)
        if (e->v[i].value == value) return; /* the first name of a value */
    e->v = xrealloc(e->v, (e->n + 1) * sizeof *e->v);
    e->v[e->n].name = xstrdup(name);
    e->v[e->n++].value = value;
}

/* Is `name` one of the policy's outputs (fnmatch patterns)? */
int gen_is_output(const policy *p, const char *name)
{
    for (size_t i = 0; i < p->outputs.n; i++)
        if (fnmatch(p->outputs.v[i], name, 0) == 0) return 1;
    return p->errcode && strcmp(p->errcode, name) == 0;
}
