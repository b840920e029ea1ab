/* The JSON lexer of saved reports (json_lex.h). */
#define _GNU_SOURCE
#include "json_lex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cgi_lex_fail(cgi_json *j, const char *what)
{
    if (j->err) return;
    j->err = 1;
    snprintf(j->msg, sizeof j->msg, "%s", what);
}

void cgi_lex_ws(cgi_json *j)
{
    while (j->s < j->end && (*j->s == ' ' || *j->s == '\n' || *j->s == '\t' || *j->s == '\r'))
        j->s++;
}

int cgi_lex_lit(cgi_json *j, char c)
{
    cgi_lex_ws(j);
    if (j->s < j->end && *j->s == c) {
        j->s++;
        return 1;
    }
    return 0;
}

int cgi_lex_expect(cgi_json *j, char c)
{
    if (cgi_lex_lit(j, c)) return 1;
    char m[64];
    snprintf(m, sizeof m, j->s >= j->end ? "ends early (expected '%c')" : "expected '%c'", c);
    cgi_lex_fail(j, m);
    return 0;
}

/* The four hex digits of a \\u escape; -1 (failed) when they are not. */
static long cgi_hex4(cgi_json *j)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++, j->s++) {
        int h = j->s >= j->end                 ? -1
                : *j->s >= '0' && *j->s <= '9' ? *j->s - '0'
                : *j->s >= 'a' && *j->s <= 'f' ? *j->s - 'a' + 10
                : *j->s >= 'A' && *j->s <= 'F' ? *j->s - 'A' + 10
                                               : -1;
        if (h < 0) {
            cgi_lex_fail(j, "expected four hex digits after \\u");
            return -1;
        }
        v = v * 16 + (unsigned)h;
    }
    return (long)v;
}

/* A \\u escape (the "\\u" read), as UTF-8 into u: a tool that escapes every
 * non-ASCII character (Python's json.dump) writes "k\\u00f6ln" for "köln",
 * and a character beyond U+FFFF as a pair of surrogates. A control
 * character (C0, DEL, C1) or a lone surrogate is '?'. Returns the bytes, 0
 * on a bad escape. */
static size_t cgi_unicode_escape(cgi_json *j, char *u)
{
    long v = cgi_hex4(j);
    if (v < 0) return 0;
    if (v >= 0xd800 && v <= 0xdbff && j->end - j->s >= 6 && j->s[0] == '\\' && j->s[1] == 'u') {
        const char *at = j->s;
        j->s += 2;
        long lo = cgi_hex4(j);
        if (lo < 0) return 0;
        if (lo >= 0xdc00 && lo <= 0xdfff)
            v = 0x10000 + ((v - 0xd800) << 10) + (lo - 0xdc00);
        else
            j->s = at; /* not its pair: read on its own */
    }
    if (v < 0x20 || (v >= 0x7f && v < 0xa0) || (v >= 0xd800 && v <= 0xdfff)) v = '?';
    if (v < 0x80) return u[0] = (char)v, 1;
    if (v < 0x800) return u[0] = (char)(0xc0 | v >> 6), u[1] = (char)(0x80 | (v & 0x3f)), 2;
    if (v < 0x10000)
        return u[0] = (char)(0xe0 | v >> 12), u[1] = (char)(0x80 | ((v >> 6) & 0x3f)), u[2] = (char)(0x80 | (v & 0x3f)),
               3;
    u[0] = (char)(0xf0 | v >> 18), u[1] = (char)(0x80 | ((v >> 12) & 0x3f));
    u[2] = (char)(0x80 | ((v >> 6) & 0x3f)), u[3] = (char)(0x80 | (v & 0x3f));
    return 4;
}

/* Fails j at an escape JSON does not have (\\q), the character shown as
 * itself when printable ASCII, else as its byte. */
static void cgi_bad_escape(cgi_json *j, char c)
{
    unsigned char b = (unsigned char)c;
    char m[128];
    if (b > 0x20 && b < 0x7f)
        snprintf(m, sizeof m, "invalid escape '\\%c' in a string", b);
    else
        snprintf(m, sizeof m, "invalid escape: '\\' before byte 0x%02x in a string", b);
    snprintf(m + strlen(m), sizeof m - strlen(m), " (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
    cgi_lex_fail(j, m);
}

int cgi_lex_str(cgi_json *j, char *out, size_t cap)
{
    if (!cgi_lex_expect(j, '"')) return 0;
    size_t n = 0;
    while (j->s < j->end && *j->s != '"') {
        char c = *j->s++;
        if (c == '\\') {
            if (j->s >= j->end) break;
            c = *j->s++;
            switch (c) {
            case '"':
            case '\\':
            case '/': break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'u': {
                char u[4];
                size_t k = cgi_unicode_escape(j, u);
                if (!k) return 0;
                /* Whole characters only: one that does not fit ends the copy. */
                if (n + k < cap)
                    memcpy(out + n, u, k), n += k;
                else
                    cap = n + 1;
                continue;
            }
            default:
                /* Not JSON (another tool's file): refused, at the backslash. */
                cgi_bad_escape(j, c);
                j->s -= 2;
                return 0;
            }
        }
        /* No terminal control from a file reaches a table: an escape or
         * a newline in a name becomes '?'. */
        if ((unsigned char)c < 0x20 || c == 0x7f) c = '?';
        if (n + 1 < cap) out[n++] = c;
    }
    if (out && cap) out[n] = '\0';
    return cgi_lex_expect(j, '"');
}

/* The number at j->s, as text (NUL-terminated: the file's text is not, and
 * strtoll would read on past its end): every character a JSON number may
 * hold, at most cap - 1 of them. */
static size_t cgi_num_text(const cgi_json *j, char *out, size_t cap)
{
    size_t n = 0;
    while (j->s + n < j->end && n + 1 < cap && j->s[n] && strchr("+-.0123456789eE", j->s[n]))
        n++;
    memcpy(out, j->s, n);
    out[n] = '\0';
    return n;
}

/* A failure naming the number found (key: the key it is the value of, or NULL). */
static void cgi_num_fail(cgi_json *j, const char *key, const char *text, const char *expected)
{
    char m[160];
    snprintf(m, sizeof m, "%s%s%s%s%s%s%s", key ? "\"" : "", key ? key : "", key ? "\": " : "", expected,
             *text ? ", not '" : "", text, *text ? "'" : "");
    cgi_lex_fail(j, m);
}

/* A whole number (callguard writes no fraction and no exponent). */
int cgi_lex_num(cgi_json *j, int64_t *out)
{
    cgi_lex_ws(j);
    char buf[24];
    size_t n = cgi_num_text(j, buf, sizeof buf);
    char *e;
    errno = 0;
    long long v = strtoll(buf, &e, 10);
    if (e == buf || errno || (size_t)(e - buf) != n || (j->s + n < j->end && n + 1 == sizeof buf)) {
        cgi_num_fail(j, NULL, buf, "expected a whole number");
        return 0;
    }
    j->s += n;
    *out = v;
    return 1;
}

/* A count (calls, nanoseconds, drops): a whole number from 0, as callguard
 * writes them. A negative one read as 0, or a fraction cut at its point,
 * would print a table that is not the report's: refused, naming it. */
int cgi_lex_count(cgi_json *j, const char *key, uint64_t *out)
{
    cgi_lex_ws(j);
    char buf[24];
    size_t n = cgi_num_text(j, buf, sizeof buf);
    int digits = n && n < sizeof buf - 1 && strspn(buf, "0123456789") == n;
    errno = 0;
    unsigned long long v = digits ? strtoull(buf, NULL, 10) : 0;
    if (!digits || errno) {
        cgi_num_fail(j, key, buf, "expected a whole number from 0");
        return 0;
    }
    j->s += n;
    *out = v;
    return 1;
}

int cgi_lex_word(cgi_json *j, const char *w)
{
    cgi_lex_ws(j);
    size_t n = strlen(w);
    if ((size_t)(j->end - j->s) >= n && strncmp(j->s, w, n) == 0) {
        j->s += n;
        return 1;
    }
    return 0;
}

static void cgi_skip_value(cgi_json *j);

/* Skips any value (for keys this reader does not need). */
void cgi_lex_skip(cgi_json *j)
{
    cgi_lex_ws(j);
    if (j->s >= j->end) return cgi_lex_fail(j, "ends early");
    if (j->depth >= CGI_JSON_MAX_DEPTH) return cgi_lex_fail(j, "nested too deeply");
    j->depth++;
    cgi_skip_value(j);
    j->depth--;
}

static void cgi_skip_value(cgi_json *j)
{
    if (*j->s == '"') {
        cgi_lex_str(j, NULL, 0);
    } else if (cgi_lex_lit(j, '{')) {
        if (cgi_lex_lit(j, '}')) return;
        do {
            cgi_lex_str(j, NULL, 0);
            cgi_lex_expect(j, ':');
            cgi_lex_skip(j);
        } while (!j->err && cgi_lex_lit(j, ','));
        cgi_lex_expect(j, '}');
    } else if (cgi_lex_lit(j, '[')) {
        if (cgi_lex_lit(j, ']')) return;
        do
            cgi_lex_skip(j);
        while (!j->err && cgi_lex_lit(j, ','));
        cgi_lex_expect(j, ']');
    } else if (!cgi_lex_word(j, "true") && !cgi_lex_word(j, "false") && !cgi_lex_word(j, "null")) {
        int64_t v;
        cgi_lex_num(j, &v);
    }
}

void cgi_read_array(cgi_json *j, cgi_item_fn *fn, void *ctx)
{
    if (!cgi_lex_expect(j, '[') || cgi_lex_lit(j, ']')) return;
    do
        fn(j, ctx);
    while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, ']');
}

void cgi_read_object(cgi_json *j, cgi_member_fn *fn, void *ctx)
{
    if (!cgi_lex_expect(j, '{')) return;
    do {
        char key[CGI_READ_KEY_MAX];
        if (!cgi_lex_str(j, key, sizeof key) || !cgi_lex_expect(j, ':')) return;
        fn(j, key, ctx);
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
}
