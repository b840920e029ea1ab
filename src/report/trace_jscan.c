/* The JSON scanner of traces (trace_jscan.h). */
#define _GNU_SOURCE
#include "trace_jscan.h"

#include <stdio.h>
#include <string.h>

void cgi_jscan_fail(cgi_jscan *j, const char *what)
{
    if (j->err) return;
    j->err = 1;
    if (j->s >= j->end)
        snprintf(j->msg, sizeof j->msg, "ends early (expected %s)", what);
    else
        snprintf(j->msg, sizeof j->msg, "expected %s at byte %zu", what, (size_t)(j->s - j->start));
}

static void cgi_jscan_ws(cgi_jscan *j)
{
    while (j->s < j->end && (*j->s == ' ' || *j->s == '\n' || *j->s == '\t' || *j->s == '\r'))
        j->s++;
}

int cgi_jscan_lit(cgi_jscan *j, char c)
{
    if (j->err) return 0;
    cgi_jscan_ws(j);
    if (j->s < j->end && *j->s == c) return j->s++, 1;
    return 0;
}

char cgi_jscan_peek(cgi_jscan *j)
{
    cgi_jscan_ws(j);
    return !j->err && j->s < j->end ? *j->s : 0;
}

static int cgi_jscan_hex(char c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }

int cgi_jscan_str(cgi_jscan *j, cgi_jspan *out)
{
    if (!cgi_jscan_lit(j, '"')) return cgi_jscan_fail(j, "a string"), 0;
    const char *p = j->s;
    while (p < j->end && *p != '"') {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20) {
            j->s = p;
            return cgi_jscan_fail(j, "no control character in a string"), 0;
        }
        if (c != '\\') {
            p++;
            continue;
        }
        if (p + 1 < j->end && strchr("\"\\/bfnrt", p[1]) && p[1]) {
            p += 2;
        } else if (p + 5 < j->end && p[1] == 'u' && cgi_jscan_hex(p[2]) && cgi_jscan_hex(p[3]) && cgi_jscan_hex(p[4]) &&
                   cgi_jscan_hex(p[5])) {
            p += 6;
        } else {
            j->s = p;
            return cgi_jscan_fail(j, "an escape JSON has"), 0;
        }
    }
    if (p >= j->end) return j->s = p, cgi_jscan_fail(j, "the string's end"), 0;
    if (out) *out = (cgi_jspan){j->s, p};
    j->s = p + 1;
    return 1;
}

static int cgi_jscan_digits(cgi_jscan *j)
{
    const char *p = j->s;
    while (j->s < j->end && *j->s >= '0' && *j->s <= '9')
        j->s++;
    return j->s > p;
}

static int cgi_jscan_num(cgi_jscan *j, cgi_jspan *out)
{
    const char *p = j->s;
    if (j->s < j->end && *j->s == '-') j->s++;
    int ok = cgi_jscan_digits(j);
    if (ok && j->s < j->end && *j->s == '.') j->s++, ok = cgi_jscan_digits(j);
    if (ok && j->s < j->end && (*j->s | 0x20) == 'e') {
        j->s++;
        if (j->s < j->end && (*j->s == '+' || *j->s == '-')) j->s++;
        ok = cgi_jscan_digits(j);
    }
    if (!ok) return cgi_jscan_fail(j, "a number"), 0;
    if (out) *out = (cgi_jspan){p, j->s};
    return 1;
}

static int cgi_jscan_word(cgi_jscan *j, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(j->end - j->s) < n || memcmp(j->s, w, n) != 0) return 0;
    j->s += n;
    return 1;
}

static void cgi_jscan_skip_member(cgi_jscan *j, cgi_jspan key, void *ctx)
{
    (void)key, (void)ctx;
    cgi_jscan_value(j, NULL);
}

static void cgi_jscan_skip_item(cgi_jscan *j, void *ctx)
{
    (void)ctx;
    cgi_jscan_value(j, NULL);
}

int cgi_jscan_value(cgi_jscan *j, cgi_jspan *out)
{
    if (j->err) return 0;
    cgi_jscan_ws(j);
    const char *p = j->s;
    char c = j->s < j->end ? *j->s : 0;
    if (c == '"') {
        if (!cgi_jscan_str(j, NULL)) return 0;
        if (out) *out = (cgi_jspan){p, j->s}; /* with its quotes: a value's raw text */
        return 1;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return cgi_jscan_num(j, out);
    if (c == '{' || c == '[') {
        if (j->depth >= CGI_JSCAN_MAX_DEPTH) return cgi_jscan_fail(j, "at most 16 levels"), 0;
        j->depth++;
        if (c == '{')
            cgi_jscan_object(j, cgi_jscan_skip_member, NULL);
        else
            cgi_jscan_array(j, cgi_jscan_skip_item, NULL);
        j->depth--;
    } else if (!cgi_jscan_word(j, "true") && !cgi_jscan_word(j, "false") && !cgi_jscan_word(j, "null")) {
        return cgi_jscan_fail(j, "a value"), 0;
    }
    if (out) *out = (cgi_jspan){p, j->s};
    return !j->err;
}

void cgi_jscan_object(cgi_jscan *j, cgi_jscan_member_fn *fn, void *ctx)
{
    if (!cgi_jscan_lit(j, '{')) return cgi_jscan_fail(j, "'{'");
    if (cgi_jscan_lit(j, '}')) return;
    do {
        cgi_jspan key;
        if (!cgi_jscan_str(j, &key)) return;
        if (!cgi_jscan_lit(j, ':')) return cgi_jscan_fail(j, "':'");
        fn(j, key, ctx);
    } while (!j->err && cgi_jscan_lit(j, ','));
    if (!j->err && !cgi_jscan_lit(j, '}')) cgi_jscan_fail(j, "',' or '}'");
}

void cgi_jscan_array(cgi_jscan *j, cgi_jscan_item_fn *fn, void *ctx)
{
    if (!cgi_jscan_lit(j, '[')) return cgi_jscan_fail(j, "'['");
    if (cgi_jscan_lit(j, ']')) return;
    do {
        fn(j, ctx);
    } while (!j->err && cgi_jscan_lit(j, ','));
    if (!j->err && !cgi_jscan_lit(j, ']')) cgi_jscan_fail(j, "',' or ']'");
}

int cgi_jspan_is(cgi_jspan v, const char *s)
{
    size_t n = strlen(s);
    return (size_t)(v.e - v.s) == n && memcmp(v.s, s, n) == 0;
}

static int cgi_jspan_whole(const char **p, const char *e, uint64_t *out)
{
    uint64_t v = 0;
    const char *start = *p;
    for (; *p < e && **p >= '0' && **p <= '9'; (*p)++) {
        if (v > (UINT64_MAX - 9) / 10) return -1;
        v = v * 10 + (uint64_t)(**p - '0');
    }
    *out = v;
    return *p > start ? 0 : -1;
}

int cgi_jspan_u64(cgi_jspan v, uint64_t *out)
{
    const char *p = v.s;
    return cgi_jspan_whole(&p, v.e, out) == 0 && p == v.e ? 0 : -1;
}

int cgi_jspan_us_ns(cgi_jspan v, uint64_t *out)
{
    const char *p = v.s;
    uint64_t us, ns = 0;
    if (cgi_jspan_whole(&p, v.e, &us) != 0 || us > UINT64_MAX / 1000) return -1;
    if (p < v.e && *p == '.') {
        p++;
        const char *digits = p;
        for (int k = 0; k < 3; k++) {
            int d = p < v.e && *p >= '0' && *p <= '9';
            ns = ns * 10 + (d ? (uint64_t)(*p++ - '0') : 0);
        }
        while (p < v.e && *p >= '0' && *p <= '9')
            p++;
        if (p == digits) return -1;
    }
    if (p != v.e) return -1;
    *out = us * 1000 + ns;
    return 0;
}
