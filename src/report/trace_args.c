/* A timeline event's arguments as JSON (trace_args.h): each by its
 * header's name, shown as the layer's table says (layer.h, cg_args). */
#define _GNU_SOURCE
#include "trace_args.h"

#include "trace_digits.h"
#include "../common/utf8.h"

#include <stdio.h>
#include <string.h>

/* A word as the `size`-byte signed integer it was. */
static int64_t cgi_tj_signed(uint64_t w, unsigned size)
{
    switch (size) {
    case 1: return (int8_t)w;
    case 2: return (int16_t)w;
    case 4: return (int32_t)w;
    }
    return (int64_t)w;
}

static char *cgi_o_i(char *o, int64_t v)
{
    if (v < 0) {
        *o++ = '-';
        return cgi_o_u(o, (uint64_t)0 - (uint64_t)v);
    }
    return cgi_o_u(o, (uint64_t)v);
}

static char *cgi_o_hex(char *o, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    char t[16];
    int n = 0;
    do
        t[n++] = hex[v & 15], v >>= 4;
    while (v);
    *o++ = '"', *o++ = '0', *o++ = 'x';
    while (n)
        *o++ = t[--n];
    *o++ = '"';
    return o;
}

/* A JSON string of a name (a header's identifier: nothing to escape, at most 64 bytes kept). */
static char *cgi_o_name(char *o, const char *name)
{
    size_t k = strnlen(name, 64);
    *o++ = '"';
    for (size_t i = 0; i < k; i++)
        *o++ = name[i] == '"' || name[i] == '\\' || (unsigned char)name[i] < 0x20 ? '_' : name[i];
    *o++ = '"';
    return o;
}

/* The name of value v among `names` (sorted by value), or NULL. */
static const char *cgi_tj_enum_name(const cg_enum_name *names, unsigned n, long long v)
{
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (names[mid].value < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && names[lo].value == v ? names[lo].name : NULL;
}

/* A value shown as `kind` (layer.h, CG_ARG_*). */
static char *cgi_o_value(char *o, const char *(*result_name)(long), unsigned kind, unsigned size,
                         const cg_enum_name *names, unsigned nnames, uint64_t w)
{
    switch (kind) {
    case CG_ARG_INT: return cgi_o_i(o, cgi_tj_signed(w, size));
    case CG_ARG_HEX: return w ? cgi_o_hex(o, w) : cgi_o_lit(o, "null");
    case CG_ARG_ENUM: {
        int64_t v = size < 8 && names && nnames && names[0].value < 0 ? cgi_tj_signed(w, size) : (int64_t)w;
        const char *n = names ? cgi_tj_enum_name(names, nnames, v) : NULL;
        return n ? cgi_o_name(o, n) : cgi_o_i(o, v);
    }
    case CG_ARG_RESULT: {
        int64_t v = cgi_tj_signed(w, size);
        const char *n = result_name ? result_name((long)v) : NULL;
        return n ? cgi_o_name(o, n) : cgi_o_i(o, v);
    }
    case CG_ARG_FLOAT: {
        double d;
        if (size == 4) {
            float f;
            uint32_t u = (uint32_t)w;
            memcpy(&f, &u, 4);
            d = f;
        } else {
            memcpy(&d, &w, 8);
        }
        char t[40];
        int n = snprintf(t, sizeof t, "%.17g", d);
        if (d != d || d - d != 0) return cgi_o_lit(o, "null"); /* NaN, infinity: no JSON number */
        memcpy(o, t, (size_t)n);
        return o + n;
    }
    }
    return cgi_o_u(o, w); /* CG_ARG_UINT */
}

char *cgi_o_args(char *o, const cg_args *a, const char *(*result_name)(long), uint32_t fl, const uint64_t *w)
{
    unsigned n = CGI_EV_WORDS(fl), at = 0;
    uint64_t ret = 0;
    int have_ret = a->ret_size && at < n;
    if (have_ret) ret = w[at++];
    unsigned first = at, nouts = 0;
    at += a->nargs;
    const unsigned out0 = at;
    for (uint32_t i = 0; i < a->nargs; i++)
        nouts += a->arg[i].kind == CG_ARG_OUT;
    unsigned strs = out0 + nouts;
    if (out0 > n || strs > n) return o;
    const char *sp = (const char *)(w + strs), *send = (const char *)(w + n);
    unsigned k = 0;
    for (uint32_t i = 0; i < a->nargs; i++) {
        const cg_arg *g = &a->arg[i];
        const cg_enum_name *names = a->names[i].names;
        uint64_t v = w[first + i];
        *o++ = ',';
        o = cgi_o_name(o, a->names[i].name);
        *o++ = ':';
        if (g->kind == CG_ARG_OUT) {
            /* The value it pointed to after the call, where it was read; else the pointer. */
            if (CGI_EV_OUTS(fl) & (1u << k))
                o = cgi_o_value(o, result_name, g->out_kind, g->out_size, names, g->nnames, w[out0 + k]);
            else
                o = v ? cgi_o_hex(o, v) : cgi_o_lit(o, "null");
            k++;
        } else if (g->kind == CG_ARG_STR) {
            if (!v || sp >= send || (fl & CGI_EV_NO_STRS)) {
                o = v ? cgi_o_hex(o, v) : cgi_o_lit(o, "null");
                continue;
            }
            size_t len = strnlen(sp, (size_t)(send - sp));
            *o++ = '"';
            o += cgi_json_escape(o, sp, len < CGI_TRACE_STR_MAX ? len : CGI_TRACE_STR_MAX);
            if ((fl & CGI_EV_STR_CUT) && len + 1 >= CGI_TRACE_STR_MAX - 7) o = cgi_o_lit(o, "...");
            *o++ = '"';
            sp += (len + 8) & ~(size_t)7;
        } else {
            o = cgi_o_value(o, result_name, g->kind, g->size, names, g->nnames, v);
        }
    }
    if (have_ret && a->ret_kind == CG_ARG_RESULT) {
        o = cgi_o_lit(o, ",\"result\":");
        o = cgi_o_value(o, result_name, CG_ARG_RESULT, a->ret_size, NULL, 0, ret);
        o = cgi_o_lit(o, ",\"result_code\":");
        o = cgi_o_i(o, cgi_tj_signed(ret, a->ret_size));
    } else if (have_ret) {
        o = cgi_o_lit(o, ",\"return\":");
        o = cgi_o_value(o, result_name, a->ret_kind, a->ret_size, NULL, 0, ret);
    }
    return o;
}
