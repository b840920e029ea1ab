/* policy_value.c: the form of every policy value (policy_value.h), and the
 * value helpers policy_ini.h offers its consumers: words, comma-separated
 * lists, versions and version ranges. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strndup */
#endif
#include "policy_value.h"

#include "../common/names.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How each value must look, and what a message says is expected. */
typedef enum vform {
    F_TEXT,        /* anything but empty */
    F_ANY,         /* anything, empty too */
    F_NAME,        /* lower-case letters, digits, _ */
    F_IDENT,       /* a C identifier */
    F_WORDS,       /* one of pini_keys[k].values */
    F_NAME_LIST,   /* comma-separated [A-Za-z0-9_]+, at least one */
    F_TEXT_LIST,   /* comma-separated, at least one */
    F_CODE,        /* an identifier or an integer */
    F_RESULTS,     /* enum or FIRST..LAST */
    F_DOMAIN,      /* [A-Za-z0-9_.-]*: empty is "not serialized" */
    F_PASSTHROUGH, /* @FILE, or function names split on commas and blanks */
    F_STATES,      /* none, or 1 to PINI_MAX_STATES comma-separated code names, each once */
    F_PARAMS,      /* comma-separated C identifiers (parameter names), at least one */
    F_IDS,         /* comma-separated integers (0x8086 or 32902) */
    F_RANGE,       /* VERSION .. VERSION */
    F_LIBRANGE,    /* SONAME VERSION .. VERSION */
    F_IDENT_LIST,  /* comma-separated C identifiers, at least one */
    F_DOMAIN_NAME, /* [A-Za-z0-9_.-]+ */
    F_URL,         /* https://... or http://..., no blanks */
} vform;

static const struct {
    vform form;
    const char *expect;
} forms[PINI_NKEYS] = {
    [PINI_NAME] = {F_NAME, "lower-case letters, digits and _"},
    [PINI_HEADER] = {F_TEXT, "a header as written in #include <...>"},
    [PINI_HEADERS] = {F_TEXT_LIST, "a comma-separated list of headers"},
    [PINI_PREFIX] = {F_NAME_LIST, "a comma-separated list of name prefixes"},
    [PINI_LIBRARY] = {F_TEXT, "the vendor library's soname"},
    [PINI_RESULT] = {F_IDENT, "a type name"},
    [PINI_SUCCESS] = {F_CODE, "a result code name or an integer"},
    [PINI_MISSING] = {F_CODE, "a result code name or an integer"},
    [PINI_RESULTS] = {F_RESULTS, "enum or FIRST..LAST (two macro names)"},
    [PINI_ERRCODE] = {F_IDENT, "a parameter name"},
    [PINI_CFLAGS] = {F_ANY, "compiler flags"},
    [PINI_PASSTHROUGH] = {F_PASSTHROUGH, "function names, or @FILE with one name a line"},
    [PINI_VARIANTS] = {F_NAME_LIST, "a comma-separated list of name suffixes (_v2, _ptds)"},
    [PINI_REAL_PREFIX] = {F_IDENT, "a C identifier put before each entry point's name (P: PMPI_Send)"},
    [PINI_SEARCH] = {F_WORDS, "system or ld_library_path"},
    [PINI_OUTPUTS] = {F_TEXT_LIST, "a comma-separated list of parameter names (fnmatch patterns: *_ret)"},
    [PINI_BLOCKING] = {F_WORDS, "yes or no"},
    [PINI_COLLECTIVE] = {F_WORDS, "yes or no"},
    [PINI_COUNT] = {F_WORDS, "yes or no"},
    [PINI_REASON] = {F_TEXT, "why the call blocks"},
    [PINI_TRANSITION] = {F_WORDS, CGI_TRANSITION_CHOICES},
    [PINI_SERIALIZE] = {F_DOMAIN, "a domain name of letters, digits, _ . - (or nothing: not serialized)"},
    [PINI_SCOPE] = {F_WORDS, CGI_SCOPE_CHOICES},
    [PINI_VARIANT_OF] = {F_IDENT, "an entry point name"},
    [PINI_WRAPPER] = {F_WORDS, "generated, hand or forward"},
    [PINI_TRACE_ARGS] = {F_WORDS, "yes or no"},
    [PINI_STATES] = {F_STATES, "none, or 1 to 4 different result code names separated by commas"},
    [PINI_WRITES] = {F_PARAMS, "a comma-separated list of the entry point's handle parameters"},
    [PINI_READS] = {F_PARAMS, "a comma-separated list of the entry point's handle parameters"},
    [PINI_DESTROYS] = {F_PARAMS, "a comma-separated list of the entry point's handle parameters"},
    [PINI_SETS] = {F_PARAMS, "a comma-separated list of the entry point's handle parameters"},
    [PINI_LAUNCHES] = {F_PARAMS, "a comma-separated list of the entry point's handle parameters"},
    [PINI_Q_API] = {F_NAME, "an API name (lower-case letters, digits and _: ze, cl, cuda)"},
    [PINI_Q_VENDOR] = {F_IDS, "a comma-separated list of PCI vendor ids (0x8086)"},
    [PINI_Q_DRIVER] = {F_TEXT, "a pattern for the driver's name (fnmatch: *, ?, [...])"},
    [PINI_Q_VERSIONS] = {F_RANGE, "LOW .. HIGH, each up to 6 numbers split on dots (26.27.39122.11)"},
    [PINI_Q_LIBRARY] = {F_LIBRANGE, "SONAME LOW .. HIGH (libigc.so.2 2.38 .. 2.38)"},
    [PINI_Q_SERIALIZE] = {F_IDENT_LIST, "a comma-separated list of entry point names"},
    [PINI_Q_SHARED] = {F_IDENT_LIST, "a comma-separated list of entry point names"},
    [PINI_Q_DOMAIN] = {F_DOMAIN_NAME, "a domain name of letters, digits, _ . -"},
    [PINI_Q_SOURCE] = {F_URL, "the public URL that documents the bug (https://...)"},
    [PINI_Q_WHY] = {F_TEXT, "one line saying what goes wrong"},
    [PINI_Q_SCOPE] = {F_WORDS, "process, once or handle"},
    [PINI_Q_ADVICE] = {F_TEXT, "one line saying what to do instead, when no lock is the fix"},
    [PINI_Q_WAITS_BEHIND] = {F_IDENT_LIST, "a comma-separated list of entry point names"},
};

int pini_word(pini_key key, const char *value)
{
    if ((unsigned)key >= PINI_NKEYS) return -1;
    const pini_key_info *k = &pini_keys[key];
    for (unsigned i = 0; i < k->nvalues; i++)
        if (strcmp(k->values[i], value) == 0) return (int)i;
    return -1;
}

int pini_split(const char *v, const char *seps, int (*fn)(const char *item, size_t len, void *arg), void *arg)
{
    while (*v) {
        size_t n = strcspn(v, seps);
        const char *a = v, *b = v + n;
        while (a < b && isspace((unsigned char)*a))
            a++;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        if (b > a) {
            int rc = fn(a, (size_t)(b - a), arg);
            if (rc) return rc;
        }
        v += n;
        if (*v) v++;
    }
    return 0;
}

/* ---- versions ---------------------------------------------------------------- */

unsigned pini_version(const char *s, size_t len, pini_version_t *out)
{
    memset(out, 0, sizeof *out);
    size_t i = 0;
    while (i < len && isdigit((unsigned char)s[i]) && out->n < PINI_VERSION_PARTS) {
        unsigned long v = 0;
        while (i < len && isdigit((unsigned char)s[i])) {
            if (v > 999999999ul) return out->n = 0; /* no driver numbers a part past 10^9 */
            v = v * 10 + (unsigned long)(s[i++] - '0');
        }
        out->part[out->n++] = v;
        out->used = i;
        if (i + 1 < len && s[i] == '.' && isdigit((unsigned char)s[i + 1]))
            i++;
        else
            break;
    }
    return out->n;
}

/* One whole bound: every character of [s, s + n) is read as the version. */
static int whole_version(const char *s, size_t n, pini_version_t *out)
{
    while (n && isspace((unsigned char)*s))
        s++, n--;
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    return n && pini_version(s, n, out) && out->used == n;
}

int pini_range_read(const char *v, pini_range *out)
{
    const char *dots = strstr(v, "..");
    if (!dots || strstr(dots + 2, "..")) return -1;
    if (!whole_version(v, (size_t)(dots - v), &out->lo) || !whole_version(dots + 2, strlen(dots + 2), &out->hi))
        return -1;
    /* LOW may not lie above HIGH, compared on the parts both have */
    unsigned n = out->lo.n < out->hi.n ? out->lo.n : out->hi.n;
    for (unsigned k = 0; k < n; k++) {
        if (out->lo.part[k] < out->hi.part[k]) return 0;
        if (out->lo.part[k] > out->hi.part[k]) return -1;
    }
    return 0;
}

int pini_range_has(const pini_range *r, const pini_version_t *v)
{
    if (!v->n) return 0;
    unsigned n = v->n < r->lo.n ? v->n : r->lo.n;
    for (unsigned k = 0; k < n; k++) {
        if (v->part[k] > r->lo.part[k]) break;
        if (v->part[k] < r->lo.part[k]) return 0;
    }
    n = v->n < r->hi.n ? v->n : r->hi.n;
    for (unsigned k = 0; k < n; k++) {
        if (v->part[k] < r->hi.part[k]) break;
        if (v->part[k] > r->hi.part[k]) return 0;
    }
    return 1;
}

size_t pini_library_read(const char *v, pini_range *out)
{
    size_t n = strcspn(v, " \t");
    if (!n || !v[n] || !pini_chars_in(v, n, "_.+-")) return 0;
    return pini_range_read(v + n, out) == 0 ? n : 0;
}

/* ---- forms of values ------------------------------------------------------ */

int pini_chars_in(const char *s, size_t n, const char *extra)
{
    if (!n) return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!isalnum(c) && !strchr(extra, c)) return 0;
    }
    return 1;
}

int pini_is_ident_n(const char *s, size_t n)
{
    return n && (isalpha((unsigned char)*s) || *s == '_') && pini_chars_in(s, n, "_");
}

static int is_ident(const char *s) { return pini_is_ident_n(s, strlen(s)); }

static int bad_ident_item(const char *s, size_t n, void *arg)
{
    (void)arg;
    return !pini_is_ident_n(s, n);
}

static int bad_name_item(const char *s, size_t n, void *arg)
{
    (void)arg;
    return !pini_chars_in(s, n, "_");
}

/* An integer id item: 0x8086 or 32902, below 2^32. */
static int bad_id_item(const char *s, size_t n, void *arg)
{
    (void)arg;
    char buf[24];
    if (n >= sizeof buf || !isdigit((unsigned char)*s)) return 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 0);
    return errno != 0 || *end != '\0' || v > 0xffffffffull;
}

static int count_item(const char *s, size_t n, void *arg)
{
    (void)s, (void)n;
    ++*(int *)arg;
    return 0;
}

typedef struct state_items {
    const char *item[PINI_MAX_STATES + 1];
    size_t len[PINI_MAX_STATES + 1];
    int n;
} state_items;

/* One name of `states`: an identifier not listed before it, within the bound. */
static int bad_state_item(const char *s, size_t n, void *arg)
{
    state_items *st = arg;
    if (!pini_is_ident_n(s, n) || st->n == PINI_MAX_STATES || (n == 4 && strncmp(s, "none", 4) == 0)) return 1;
    for (int i = 0; i < st->n; i++)
        if (st->len[i] == n && strncmp(st->item[i], s, n) == 0) return 1;
    st->item[st->n] = s, st->len[st->n++] = n;
    return 0;
}

static int is_code(const char *s)
{
    if (is_ident(s)) return 1;
    if (*s == '-') s++;
    if (!isdigit((unsigned char)*s)) return 0;
    char *end;
    errno = 0;
    (void)strtoll(s, &end, 0);
    return errno == 0 && *end == '\0';
}

int pini_value_ok(pini_key k, const char *v)
{
    int items = 0;
    switch (forms[k].form) {
    case F_TEXT: return *v != '\0';
    case F_ANY: return 1;
    case F_NAME:
        for (const char *c = v; *c; c++)
            if (!(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_')) return 0;
        return *v != '\0';
    case F_IDENT: return is_ident(v);
    case F_WORDS: return pini_word(k, v) >= 0;
    case F_NAME_LIST:
        pini_split(v, ",", count_item, &items);
        return items > 0 && !pini_split(v, ",", bad_name_item, NULL);
    case F_TEXT_LIST: pini_split(v, ",", count_item, &items); return items > 0;
    case F_CODE: return is_code(v);
    case F_RESULTS: {
        if (strcmp(v, "enum") == 0) return 1;
        const char *dots = strstr(v, "..");
        return dots && pini_is_ident_n(v, (size_t)(dots - v)) && is_ident(dots + 2);
    }
    case F_DOMAIN: return !*v || pini_chars_in(v, strlen(v), "_.-");
    case F_STATES: {
        if (strcmp(v, "none") == 0) return 1;
        state_items st = {.n = 0};
        return !pini_split(v, ",", bad_state_item, &st) && st.n > 0;
    }
    case F_PASSTHROUGH:
        if (*v == '@') return v[1] != '\0';
        pini_split(v, ", \t", count_item, &items);
        return items > 0 && !pini_split(v, ", \t", bad_ident_item, NULL);
    case F_PARAMS:
        pini_split(v, ",", count_item, &items);
        return items > 0 && !pini_split(v, ",", bad_ident_item, NULL);
    case F_IDS: pini_split(v, ",", count_item, &items); return items > 0 && !pini_split(v, ",", bad_id_item, NULL);
    case F_RANGE: {
        pini_range r;
        return pini_range_read(v, &r) == 0;
    }
    case F_LIBRANGE: {
        pini_range r;
        return pini_library_read(v, &r) > 0;
    }
    case F_IDENT_LIST:
        pini_split(v, ",", count_item, &items);
        return items > 0 && !pini_split(v, ",", bad_ident_item, NULL);
    case F_DOMAIN_NAME: return pini_chars_in(v, strlen(v), "_.-");
    case F_URL:
        if (strncmp(v, "https://", 8) != 0 && strncmp(v, "http://", 7) != 0) return 0;
        for (const char *c = v; *c; c++)
            if (isspace((unsigned char)*c)) return 0;
        return strlen(v) > 8;
    }
    return 0;
}

const char *pini_value_expected(pini_key k) { return forms[k].expect; }
