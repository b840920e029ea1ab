/* policy_ini.c: reads a policy file through libinih, with every check that
 * needs neither the header nor the loaded layers.
 *
 * libinih reports no line numbers to its handler, passes a duplicate key as
 * a second call, says nothing about empty or repeated sections, splits a
 * line longer than its 200-byte buffer into two lines (the tail of a long
 * comment becomes a setting), and appends an indented line to the value of
 * the key above it. So the file is fed to libinih through our own line
 * reader, which counts lines, refuses what libinih would misread, and sees
 * every section header itself. Only the first error is reported: later ones
 * are often its echoes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getline, strndup */
#endif
#include "policy_value.h"

#include "../common/names.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest policy file read: the generated ones are about 10 KB. */
#define PINI_MAX_FILE (4 << 20)

static const char *const yes_no_words[] = {"no", "yes"};
static const char *const wrapper_words[] = {"generated", "hand", "forward"};
/* A quirk's scope: its fix holds for the whole process, or until each entry
 * point's first success (a bug of first calls only). */
/* Where `callguard run` looks for the real library by soname (the policy's
 * [api] `search`): as the dynamic loader does, or on LD_LIBRARY_PATH alone. */
static const char *const pini_search_words[] = {"system", "ld_library_path"};
static const char *const quirk_scope_words[] = {"process", "once", "handle"};

#define A (1u << PINI_API)
#define D (1u << PINI_DEFAULTS)
#define S (1u << PINI_SITE)
#define Q (1u << PINI_QUIRK)

/* In the order error messages list a section's keys. */
const pini_key_info pini_keys[PINI_NKEYS] = {
    [PINI_NAME] = {"name", A, NULL},
    [PINI_HEADER] = {"header", A, NULL},
    [PINI_HEADERS] = {"headers", A, NULL},
    [PINI_ABI_HEADERS] = {"abi_headers", A, NULL},
    [PINI_PREFIX] = {"prefix", A, NULL},
    [PINI_LIBRARY] = {"library", A, NULL},
    [PINI_RESULT] = {"result", A, NULL},
    [PINI_SUCCESS] = {"success", A, NULL},
    [PINI_MISSING] = {"missing", A, NULL},
    [PINI_RESULTS] = {"results", A, NULL},
    [PINI_ERRCODE] = {"errcode", A, NULL},
    [PINI_CFLAGS] = {"cflags", A, NULL},
    [PINI_PASSTHROUGH] = {"passthrough", A, NULL},
    [PINI_VARIANTS] = {"variants", A, NULL},
    [PINI_REAL_PREFIX] = {"real_prefix", A, NULL},
    [PINI_SEARCH] = {"search", A, pini_search_words, 2},
    [PINI_OUTPUTS] = {"outputs", A, NULL},
    [PINI_BLOCKING] = {"blocking", S, yes_no_words, 2},
    [PINI_COLLECTIVE] = {"collective", S, yes_no_words, 2},
    [PINI_COUNT] = {"count", D | S, yes_no_words, 2},
    [PINI_REASON] = {"reason", S, NULL},
    [PINI_WAIT_ARGS] = {"wait_args", S, NULL},
    [PINI_TRANSITION] = {"transition", D | S, cgi_transition_names, CGI_NTRANSITIONS},
    [PINI_SERIALIZE] = {"serialize", S, NULL},
    [PINI_SCOPE] = {"scope", S, cgi_scope_names, CGI_NSCOPES},
    [PINI_VARIANT_OF] = {"variant_of", S, NULL},
    [PINI_WRAPPER] = {"wrapper", S, wrapper_words, 3},
    [PINI_TRACE_ARGS] = {"trace_args", S, yes_no_words, 2},
    [PINI_STATES] = {"states", A | S, NULL},
#define PINI_RULE_ROW(id, key, access) [PINI_##id] = {key, S, NULL},
    CGI_RULE_KEY_LIST(PINI_RULE_ROW)
#undef PINI_RULE_ROW
        [PINI_Q_API] = {"api", Q, NULL},
    [PINI_Q_VENDOR] = {"vendor", Q, NULL},
    [PINI_Q_DRIVER] = {"driver", Q, NULL},
    [PINI_Q_VERSIONS] = {"versions", Q, NULL},
    [PINI_Q_LIBRARY] = {"library", Q, NULL},
    [PINI_Q_SERIALIZE] = {"serialize", Q, NULL},
    [PINI_Q_SHARED] = {"shared", Q, NULL},
    [PINI_Q_DOMAIN] = {"domain", Q, NULL},
    [PINI_Q_SOURCE] = {"source", Q, NULL},
    [PINI_Q_WHY] = {"why", Q, NULL},
    [PINI_Q_SCOPE] = {"scope", Q, quirk_scope_words, 3},
    [PINI_Q_ADVICE] = {"advice", Q, NULL},
    [PINI_Q_WAITS_BEHIND] = {"waits_behind", Q, NULL, 0, 1},
};
#undef A
#undef D
#undef S
#undef Q

/* The order keys are listed in messages: as docs/configuration.md lists them. */
static const pini_key key_order[PINI_NKEYS] = {
    PINI_NAME,        PINI_HEADER,     PINI_HEADERS,     PINI_ABI_HEADERS, PINI_PREFIX,         PINI_LIBRARY,
    PINI_RESULT,      PINI_SUCCESS,    PINI_MISSING,     PINI_RESULTS,     PINI_ERRCODE,        PINI_CFLAGS,
    PINI_PASSTHROUGH, PINI_VARIANTS,   PINI_REAL_PREFIX, PINI_SEARCH,      PINI_OUTPUTS,        PINI_BLOCKING,
    PINI_COLLECTIVE,  PINI_COUNT,      PINI_REASON,      PINI_WAIT_ARGS,   PINI_TRANSITION,     PINI_SERIALIZE,
    PINI_SCOPE,       PINI_VARIANT_OF, PINI_WRAPPER,     PINI_TRACE_ARGS,  PINI_WRITES,         PINI_READS,
    PINI_DESTROYS,    PINI_SETS,       PINI_LAUNCHES,    PINI_STATES,      PINI_Q_API,          PINI_Q_VENDOR,
    PINI_Q_DRIVER,    PINI_Q_VERSIONS, PINI_Q_LIBRARY,   PINI_Q_SERIALIZE, PINI_Q_SHARED,       PINI_Q_DOMAIN,
    PINI_Q_SOURCE,    PINI_Q_WHY,      PINI_Q_SCOPE,     PINI_Q_ADVICE,    PINI_Q_WAITS_BEHIND,
};

struct pini_file {
    const char *path;
    FILE *f;
    int lineno;
    int error; /* PINI_* of the first error; PINI_OK while none */
    char *err;
    size_t errsize;
    pini_section *secs;
    size_t nsecs;
    long cur;     /* index of the section being read, -1 before the first */
    int key_line; /* line of the last key of the current section, 0 if none yet */
    char *line;   /* getline's buffer */
    size_t linecap;
};

static int fail(pini_file *f, int status, int line, const char *fmt, va_list ap)
{
    if (f->error) return f->error;
    f->error = status;
    if (!f->errsize) return status;
    int n = line > 0 ? snprintf(f->err, f->errsize, "%s:%d: ", f->path, line) : 0;
    if (n < 0 || (size_t)n >= f->errsize) return status;
    vsnprintf(f->err + n, f->errsize - (size_t)n, fmt, ap);
    return status;
}

int pini_error(pini_file *f, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail(f, PINI_EFORMAT, line, fmt, ap);
    va_end(ap);
    return rc;
}

static int fail_status(pini_file *f, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_status(pini_file *f, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = fail(f, status, 0, fmt, ap);
    va_end(ap);
    return rc;
}

const char *pini_path(const pini_file *f) { return f->path; }

/* ---- reading ---------------------------------------------------------------- */

static const char *kind_label(pini_kind k)
{
    return k == PINI_API        ? "[api]"
           : k == PINI_DEFAULTS ? "[defaults]"
           : k == PINI_QUIRK    ? "a [quirk:NAME] section"
                                : "an entry point section";
}

/* "a, b or c": the keys a kind of section accepts. */
static void key_list(pini_kind kind, char *out, size_t size)
{
    size_t n = 0, total = 0, len = 0;
    for (int i = 0; i < PINI_NKEYS; i++)
        total += (pini_keys[key_order[i]].sections >> kind) & 1;
    out[0] = '\0';
    for (int i = 0; i < PINI_NKEYS; i++) {
        const pini_key_info *k = &pini_keys[key_order[i]];
        if (!((k->sections >> kind) & 1)) continue;
        n++;
        int w = snprintf(out + len, size - len, "%s%s", n == 1 ? "" : n == total ? " or " : ", ", k->name);
        if (w < 0 || (size_t)w >= size - len) return;
        len += (size_t)w;
    }
}

static void enter_section(pini_file *f, const char *name, size_t n)
{
    for (size_t i = 0; i < f->nsecs; i++)
        if (strlen(f->secs[i].name) == n && strncmp(f->secs[i].name, name, n) == 0) {
            pini_error(f, f->lineno, "duplicate section [%.*s] (first at line %d)", (int)n, name, f->secs[i].line);
            return;
        }
    pini_kind kind = PINI_SITE;
    if (n == 3 && strncmp(name, "api", 3) == 0)
        kind = PINI_API;
    else if (n == 8 && strncmp(name, "defaults", 8) == 0)
        kind = PINI_DEFAULTS;
    else if (n >= 6 && strncmp(name, "quirk:", 6) == 0) {
        if (!pini_chars_in(name + 6, n - 6, "_.-")) {
            pini_error(f, f->lineno, "section [%.*s]: expected [quirk:NAME], NAME of letters, digits, _ . -", (int)n,
                       name);
            return;
        }
        kind = PINI_QUIRK;
    } else if (!pini_is_ident_n(name, n)) {
        pini_error(f, f->lineno, "section [%.*s]: expected [api], [defaults], [quirk:NAME] or an entry point name",
                   (int)n, name);
        return;
    }
    pini_section *secs = realloc(f->secs, (f->nsecs + 1) * sizeof *secs);
    char *copy = strndup(name, n);
    if (secs) f->secs = secs;
    if (!secs || !copy) {
        free(copy);
        fail_status(f, PINI_ENOMEM, "out of memory");
        return;
    }
    pini_section *s = &f->secs[f->nsecs];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->name = copy;
    s->line = f->lineno;
    f->cur = (long)f->nsecs++;
    f->key_line = 0;
}

/* Where libinih ends a key or a section name: at one of `chars`, or at an
 * inline comment (a ; after a blank). */
static const char *find_chars_or_comment(const char *s, const char *chars)
{
    int was_space = 0;
    while (*s && !strchr(chars, *s) && !(was_space && *s == ';')) {
        was_space = isspace((unsigned char)*s);
        s++;
    }
    return s;
}

/* libinih's line reader: hands libinih only lines it will read as we do. */
static char *read_line(char *buf, int size, void *stream)
{
    pini_file *f = stream;
    if (f->error) return NULL;
    ssize_t len = getline(&f->line, &f->linecap, f->f);
    if (len < 0) return NULL;
    f->lineno++;
    if (memchr(f->line, '\0', (size_t)len)) {
        pini_error(f, f->lineno, "NUL byte in the line: a policy file is text");
        return NULL;
    }
    size_t chars = (size_t)len - (len > 0 && f->line[len - 1] == '\n');
    if (chars + 2 > (size_t)size) {
        pini_error(f, f->lineno, "line too long: %zu characters, at most %d", chars, size - 2);
        return NULL;
    }
    memcpy(buf, f->line, (size_t)len + 1);

    const char *start = buf;
    if (f->lineno == 1 && strncmp(start, "\xEF\xBB\xBF", 3) == 0) start += 3;
    const char *s = start;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s || *s == ';' || *s == '#') return buf;
    if (s > start && f->key_line) {
        pini_error(f, f->lineno,
                   "indented line: it would continue the value set at line %d; write each key and value on one "
                   "line, unindented",
                   f->key_line);
        return NULL;
    }
    if (*s == '[') {
        const char *end = find_chars_or_comment(s + 1, "]");
        if (*end != ']') {
            pini_error(f, f->lineno, "syntax error: a section line needs its closing ]");
            return NULL;
        }
        enter_section(f, s + 1, (size_t)(end - s - 1));
        return f->error ? NULL : buf;
    }
    const char *sep = find_chars_or_comment(s, "=:");
    if (*sep != '=' && *sep != ':') {
        pini_error(f, f->lineno, "syntax error: expected [section], key = value, or a ; comment");
        return NULL;
    }
    return buf;
}

static int on_value(void *user, const char *section, const char *name, const char *value)
{
    (void)section; /* the reader saw the section line itself */
    pini_file *f = user;
    if (f->error) return 0;
    if (f->cur < 0) {
        pini_error(f, f->lineno, "%s = %s before any section: expected [api], [defaults] or [ENTRY_POINT] first", name,
                   value);
        return 0;
    }
    pini_section *s = &f->secs[f->cur];
    if (!*name) {
        pini_error(f, f->lineno, "= %s without a key: expected key = value", value);
        return 0;
    }
    int k = 0;
    while (k < PINI_NKEYS && !(strcmp(pini_keys[k].name, name) == 0 && ((pini_keys[k].sections >> s->kind) & 1)))
        k++;
    if (k == PINI_NKEYS) {
        char list[400];
        key_list(s->kind, list, sizeof list);
        pini_error(f, f->lineno, "unknown key %s in [%s]: %s accepts %s", name, s->name, kind_label(s->kind), list);
        return 0;
    }
    if (s->key_line[k] && !pini_keys[k].repeats) {
        pini_error(f, f->lineno, "duplicate key %s in [%s] (first set at line %d)", name, s->name, s->key_line[k]);
        return 0;
    }
    if (!pini_value_ok((pini_key)k, value)) {
        if (*value)
            pini_error(f, f->lineno, "%s = %s: expected %s", name, value, pini_value_expected((pini_key)k));
        else
            pini_error(f, f->lineno, "%s is empty: expected %s", name, pini_value_expected((pini_key)k));
        return 0;
    }
    char *copy = NULL;
    if (s->value[k]) { /* a repeating list's next line */
        if (asprintf(&copy, "%s, %s", s->value[k], value) < 0) copy = NULL;
    } else {
        copy = strdup(value);
    }
    if (!copy) {
        fail_status(f, PINI_ENOMEM, "out of memory");
        return 0;
    }
    free((char *)s->value[k]);
    s->value[k] = copy;
    if (!s->key_line[k]) s->key_line[k] = f->lineno;
    f->key_line = f->lineno;
    return 1;
}

/* ---- checks that need a whole section or the whole file --------------------------- */

static int has_prefix_item(const char *item, size_t n, void *arg) { return strncmp(arg, item, n) == 0; }

static void check_api(pini_file *f, const pini_section *s)
{
    static const pini_key required[] = {PINI_NAME, PINI_HEADER, PINI_PREFIX, PINI_LIBRARY};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (!s->value[required[i]]) {
            pini_error(f, s->line, "[api] has no %s", pini_keys[required[i]].name);
            return;
        }
    const char *result = s->value[PINI_RESULT];
    if (result) {
        if (!s->value[PINI_SUCCESS])
            pini_error(f, s->line, "[api] has result = %s but no success (the result code of success)", result);
        else if (!s->value[PINI_MISSING])
            pini_error(f, s->line, "[api] has result = %s but no missing (what calls return without the library)",
                       result);
        return;
    }
    static const pini_key need_result[] = {PINI_SUCCESS, PINI_MISSING, PINI_RESULTS, PINI_ERRCODE, PINI_STATES};
    for (size_t i = 0; i < sizeof need_result / sizeof *need_result; i++)
        if (s->value[need_result[i]]) {
            pini_error(f, s->key_line[need_result[i]], "[api] sets %s without result: name the result type first",
                       pini_keys[need_result[i]].name);
            return;
        }
}

/* A parameter named twice in one section's thread rules: writes, reads and
 * destroys are one access each (destroys is a write), sets and launches
 * are the two ends of a sequence. */
typedef struct rule_seen {
    const char *item;
    size_t len;
    int key;
} rule_seen;

typedef struct rule_scan {
    rule_seen seen[64];
    int n, key, dup_key;
    const char *dup;
    size_t dup_len;
} rule_scan;

static int same_group(int a, int b)
{
    int ga = a == PINI_SETS || a == PINI_LAUNCHES, gb = b == PINI_SETS || b == PINI_LAUNCHES;
    return ga == gb;
}

static int scan_rule_item(const char *item, size_t len, void *arg)
{
    rule_scan *r = arg;
    for (int i = 0; i < r->n; i++)
        if (r->seen[i].len == len && strncmp(r->seen[i].item, item, len) == 0 && same_group(r->seen[i].key, r->key)) {
            r->dup = item, r->dup_len = len, r->dup_key = r->seen[i].key;
            return 1;
        }
    if (r->n < (int)(sizeof r->seen / sizeof *r->seen)) r->seen[r->n++] = (rule_seen){item, len, r->key};
    return 0;
}

static int check_rules(pini_file *f, const pini_section *s)
{
    static const pini_key keys[] = {PINI_WRITES, PINI_READS, PINI_DESTROYS, PINI_SETS, PINI_LAUNCHES};
    rule_scan r = {.n = 0};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = s->value[keys[i]];
        if (!v) continue;
        r.key = keys[i];
        if (pini_split(v, ",", scan_rule_item, &r)) {
            const char *a = pini_keys[r.dup_key].name, *b = pini_keys[keys[i]].name;
            if (r.dup_key == (int)keys[i])
                return pini_error(f, s->key_line[keys[i]], "%s = %s: %.*s is named twice", b, v, (int)r.dup_len, r.dup);
            return pini_error(f, s->key_line[keys[i]],
                              "%s = %s: %.*s is in %s too: name a parameter in one of writes, reads and destroys "
                              "(destroys is a write, writes excludes reads), and in one of sets and launches",
                              b, v, (int)r.dup_len, r.dup, a);
        }
    }
    return 0;
}

static void check_site(pini_file *f, const pini_section *s, const pini_section *api)
{
    if (check_rules(f, s)) return;
    const char *const *v = s->value;
    if (api && api->value[PINI_PREFIX] && !pini_split(api->value[PINI_PREFIX], ",", has_prefix_item, (void *)s->name)) {
        pini_error(f, s->line, "unknown entry point %s: its name lacks the [api] prefix %s", s->name,
                   api->value[PINI_PREFIX]);
        return;
    }
    int blocking = v[PINI_BLOCKING] && pini_word(PINI_BLOCKING, v[PINI_BLOCKING]) == 1;
    if (blocking && !v[PINI_REASON]) {
        pini_error(f, s->line, "[%s] has blocking = yes without reason: say why it blocks", s->name);
    } else if (v[PINI_REASON] && !blocking) {
        pini_error(f, s->line, "[%s] has a reason but not blocking = yes", s->name);
    } else if (v[PINI_WAIT_ARGS] && !blocking) {
        pini_error(f, s->key_line[PINI_WAIT_ARGS],
                   "[%s] has wait_args but not blocking = yes: the arguments are kept on the blocking path only",
                   s->name);
    } else if (v[PINI_SCOPE] && !v[PINI_SERIALIZE]) {
        pini_error(f, s->key_line[PINI_SCOPE], "[%s] has scope = %s without serialize: a scope is a lock domain's",
                   s->name, v[PINI_SCOPE]);
    } else if (v[PINI_VARIANT_OF]) {
        if (strcmp(v[PINI_VARIANT_OF], s->name) == 0) {
            pini_error(f, s->key_line[PINI_VARIANT_OF], "variant_of = %s: expected another entry point", s->name);
            return;
        }
        for (int k = 0; k < PINI_NKEYS; k++)
            if (k != PINI_VARIANT_OF && v[k]) {
                pini_error(f, s->line, "[%s] is a variant_of %s and shares its policy: set the other keys on [%s]",
                           s->name, v[PINI_VARIANT_OF], v[PINI_VARIANT_OF]);
                return;
            }
    }
}

static void check_quirk(pini_file *f, const pini_section *s)
{
    static const pini_key required[] = {PINI_Q_API,    PINI_Q_VERSIONS, PINI_Q_SERIALIZE,
                                        PINI_Q_DOMAIN, PINI_Q_SOURCE,   PINI_Q_WHY};
    /* An advice-only quirk (advice = what to do) serializes nothing: no domain. */
    int advice = s->value[PINI_Q_ADVICE] != NULL;
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (!s->value[required[i]] && !(advice && required[i] == PINI_Q_DOMAIN)) {
            pini_error(f, s->line,
                       "[%s] has no %s: a quirk needs api, versions, serialize, source, why, and domain unless it "
                       "gives advice",
                       s->name, pini_keys[required[i]].name);
            return;
        }
    pini_key lock = s->value[PINI_Q_DOMAIN] ? PINI_Q_DOMAIN : s->value[PINI_Q_SCOPE] ? PINI_Q_SCOPE : PINI_Q_SHARED;
    if (advice && s->value[lock])
        pini_error(f, s->key_line[lock], "[%s] gives advice and so serializes nothing: drop %s, or drop advice",
                   s->name, pini_keys[lock].name);
    else if (s->value[PINI_Q_SHARED] && s->value[PINI_Q_SCOPE] && strcmp(s->value[PINI_Q_SCOPE], "process") != 0)
        pini_error(f, s->key_line[PINI_Q_SHARED],
                   "[%s] has shared with scope = %s: a domain taken shared is one lock for the whole process", s->name,
                   s->value[PINI_Q_SCOPE]);
}

static void check_file(pini_file *f)
{
    const pini_section *api = NULL;
    for (size_t i = 0; i < f->nsecs; i++)
        if (f->secs[i].kind == PINI_API) api = &f->secs[i];
    for (size_t i = 0; i < f->nsecs && !f->error; i++) {
        if (f->secs[i].kind == PINI_API)
            check_api(f, &f->secs[i]);
        else if (f->secs[i].kind == PINI_SITE)
            check_site(f, &f->secs[i], api);
        else if (f->secs[i].kind == PINI_QUIRK)
            check_quirk(f, &f->secs[i]);
    }
}

int pini_read(const char *path, pini_section_fn fn, void *user, char *err, size_t errsize)
{
    pini_file f = {.path = path, .err = err, .errsize = errsize, .cur = -1};
    if (errsize) err[0] = '\0';
    /* Only a regular file of sane size: a FIFO would block the open and the
     * read, /dev/zero is one endless line, a directory reads as empty.
     * O_NONBLOCK for the open only (a FIFO opens without waiting for a writer). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) return fail_status(&f, PINI_EIO, "cannot read policy file %s: %s", path, strerror(errno));
    struct stat st;
    const char *why = NULL;
    char size[64];
    if (fstat(fd, &st) != 0)
        why = strerror(errno);
    else if (S_ISDIR(st.st_mode))
        why = "a directory, expected a regular file";
    else if (S_ISFIFO(st.st_mode))
        why = "a FIFO, expected a regular file";
    else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
        why = "a device, expected a regular file";
    else if (!S_ISREG(st.st_mode))
        why = "not a regular file";
    else if (st.st_size > PINI_MAX_FILE) {
        snprintf(size, sizeof size, "%lld bytes, at most %d", (long long)st.st_size, PINI_MAX_FILE);
        why = size;
    }
    if (why) {
        close(fd);
        return fail_status(&f, PINI_EIO, "cannot read policy file %s: %s", path, why);
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    f.f = fdopen(fd, "r");
    if (!f.f) {
        close(fd);
        return fail_status(&f, PINI_ENOMEM, "out of memory");
    }
    int rc = ini_parse_stream(read_line, &f, on_value, &f);
    if (!f.error && ferror(f.f)) fail_status(&f, PINI_EIO, "cannot read policy file %s: %s", path, strerror(errno));
    if (!f.error && rc == -2) fail_status(&f, PINI_ENOMEM, "out of memory");
    if (!f.error && rc != 0)
        pini_error(&f, rc > 0 ? rc : f.lineno, "syntax error: expected [section], key = value, or a ; comment");
    fclose(f.f);
    free(f.line);
    if (!f.error) check_file(&f);
    for (size_t i = 0; i < f.nsecs && !f.error; i++)
        if (fn(&f, &f.secs[i], user) && !f.error) pini_error(&f, f.secs[i].line, "[%s] refused", f.secs[i].name);
    for (size_t i = 0; i < f.nsecs; i++) {
        free((char *)f.secs[i].name);
        for (int k = 0; k < PINI_NKEYS; k++)
            free((char *)f.secs[i].value[k]);
    }
    free(f.secs);
    return f.error;
}
