/* policy.c: reads a layer's policy file (INI, through libinih) and checks
 * every key and value that can be checked without the header. Entry point
 * names and result codes are checked by parse.c once the header is read.
 *
 * libinih does not report line numbers to the handler, passes a duplicate
 * key as a second call, and says nothing about empty or repeated sections;
 * so the file is fed to it through our own line reader, which counts lines
 * and sees every section header itself. */
#include "gen.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum section_kind { SEC_NONE, SEC_API, SEC_DEFAULTS, SEC_SITE };

/* The keys each kind of section accepts, in the order error messages list them. */
static const char *const api_keys[] = {"name",    "header",  "headers", "prefix", "library",     "result",
                                       "success", "missing", "results", "cflags", "passthrough", "errcode", NULL};
static const char *const defaults_keys[] = {"transition", NULL};
static const char *const site_keys[] = {"blocking", "reason", "transition", "serialize", "scope", "variant_of", NULL};

#define MAX_KEYS 16

typedef struct section {
    char *name;
    int line;
    enum section_kind kind;
    int key_line[MAX_KEYS]; /* where each key was set, 0 if not */
} section;

typedef struct reader {
    FILE *f;
    policy *p;
    int lineno;
    int error; /* an error was printed */
    section *secs;
    size_t nsecs;
    section *cur; /* the section the reader last entered */
} reader;

static void error_at(reader *r, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void error_at(reader *r, int line, const char *fmt, ...)
{
    if (r->error)
        return; /* report the first error only: later ones are often its echoes */
    r->error = 1;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: ", r->p->path, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static const char *const *keys_of(enum section_kind k)
{
    return k == SEC_API ? api_keys : k == SEC_DEFAULTS ? defaults_keys : site_keys;
}

static const char *section_label(enum section_kind k)
{
    return k == SEC_API ? "[api]" : k == SEC_DEFAULTS ? "[defaults]" : "an entry point section";
}

/* "a, b or c" */
static char *key_list(const char *const *keys)
{
    size_t n = 0;
    while (keys[n])
        n++;
    char *s = xstrdup("");
    for (size_t i = 0; i < n; i++) {
        char *t = xasprintf("%s%s%s", s, i == 0 ? "" : i + 1 == n ? " or " : ", ", keys[i]);
        free(s);
        s = t;
    }
    return s;
}

/* Notes a `[name]` line: the reader sees it before libinih does. */
static void enter_section(reader *r, const char *name)
{
    for (size_t i = 0; i < r->nsecs; i++) {
        if (strcmp(r->secs[i].name, name) == 0) {
            error_at(r, r->lineno, "duplicate section [%s] (first at line %d)", name, r->secs[i].line);
            return;
        }
    }
    r->secs = xrealloc(r->secs, (r->nsecs + 1) * sizeof *r->secs);
    section *s = &r->secs[r->nsecs++];
    memset(s, 0, sizeof *s);
    s->name = xstrdup(name);
    s->line = r->lineno;
    if (strcmp(name, "api") == 0) {
        s->kind = SEC_API;
        r->p->api_line = r->lineno;
    } else if (strcmp(name, "defaults") == 0) {
        s->kind = SEC_DEFAULTS;
    } else {
        s->kind = SEC_SITE;
        r->p->sites = xrealloc(r->p->sites, (r->p->nsites + 1) * sizeof *r->p->sites);
        site_policy *sp = &r->p->sites[r->p->nsites++];
        memset(sp, 0, sizeof *sp);
        sp->name = xstrdup(name);
        sp->line = r->lineno;
        sp->transition = sp->blocking = sp->scope = POLICY_UNSET;
    }
    r->cur = s;
}

/* libinih's line reader: counts lines, spots section headers, and refuses
 * lines libinih would silently cut at INI_MAX_LINE. */
static char *read_line(char *buf, int size, void *stream)
{
    reader *r = stream;
    if (r->error)
        return NULL;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, r->f);
    if (len < 0) {
        free(line);
        return NULL;
    }
    r->lineno++;
    if (len >= size) {
        error_at(r, r->lineno, "line too long (at most %d characters)", size - 2);
        free(line);
        return NULL;
    }
    memcpy(buf, line, (size_t)len + 1);
    free(line);

    const char *s = buf;
    if (r->lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '[') {
        const char *end = strchr(s, ']');
        if (end) {
            char *name = xstrndup(s + 1, (size_t)(end - s - 1));
            enter_section(r, name);
            free(name);
        }
    }
    return buf;
}

static int is_ident(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_'))
            return 0;
    return 1;
}

static int all_chars(const char *s, const char *extra, int lower_only)
{
    if (!*s)
        return 0;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        int ok = isdigit(c) || (lower_only ? islower(c) : isalpha(c)) || strchr(extra, c);
        if (!ok)
            return 0;
    }
    return 1;
}

/* An identifier or an integer literal, possibly negative. */
static int is_value(const char *s)
{
    if (is_ident(s))
        return 1;
    if (*s == '-')
        s++;
    if (!isdigit((unsigned char)*s))
        return 0;
    char *end;
    errno = 0;
    (void)strtoll(s, &end, 0);
    return errno == 0 && *end == '\0';
}

/* Splits on `sep` characters, trims spaces, drops empty items. */
static void split(strlist *out, const char *v, const char *sep)
{
    const char *s = v;
    while (*s) {
        size_t n = strcspn(s, sep);
        const char *a = s, *b = s + n;
        while (a < b && isspace((unsigned char)*a))
            a++;
        while (b > a && isspace((unsigned char)b[-1]))
            b--;
        if (b > a) {
            char *item = xstrndup(a, (size_t)(b - a));
            strlist_push(out, item);
            free(item);
        }
        s += n;
        if (*s)
            s++;
    }
}

static int parse_transition(reader *r, const char *v, int *out)
{
    if (strcmp(v, "always") == 0)
        *out = TRANSITION_ALWAYS;
    else if (strcmp(v, "blocking") == 0)
        *out = TRANSITION_BLOCKING;
    else if (strcmp(v, "never") == 0)
        *out = TRANSITION_NEVER;
    else {
        error_at(r, r->lineno, "transition = %s: expected always, blocking or never", v);
        return 0;
    }
    return 1;
}

/* passthrough = NAME, NAME... or @FILE (relative to the policy file): one
 * name per line, `#` starts a comment. Names the vendor library exports but
 * the header does not declare; parse.c checks they are not entry points. */
static int read_passthrough(reader *r, const char *v)
{
    policy *p = r->p;
    if (*v != '@') {
        split(&p->passthrough, v, ", \t");
    } else {
        const char *slash = strrchr(p->path, '/');
        char *path = v[1] == '/' || !slash ? xstrdup(v + 1) : xasprintf("%.*s/%s", (int)(slash - p->path), p->path, v + 1);
        FILE *f = fopen(path, "r");
        if (!f) {
            error_at(r, r->lineno, "passthrough = %s: cannot read %s: %s", v, path, strerror(errno));
            free(path);
            return 0;
        }
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, f) >= 0) {
            line[strcspn(line, "#")] = '\0';
            split(&p->passthrough, line, " \t\r\n");
        }
        free(line);
        fclose(f);
        free(path);
    }
    for (size_t i = 0; i < p->passthrough.n; i++)
        if (!is_ident(p->passthrough.v[i]))
            return error_at(r, r->lineno, "passthrough: %s is not a function name", p->passthrough.v[i]), 0;
    for (size_t i = 0; i < p->passthrough.n; i++)
        for (size_t j = 0; j < i; j++)
            if (strcmp(p->passthrough.v[i], p->passthrough.v[j]) == 0)
                return error_at(r, r->lineno, "passthrough: %s is listed twice", p->passthrough.v[i]), 0;
    return 1;
}

static int api_value(reader *r, const char *key, const char *v)
{
    policy *p = r->p;
    if (strcmp(key, "name") == 0) {
        if (!all_chars(v, "_", 1))
            return error_at(r, r->lineno, "name = %s: expected lower-case letters, digits and _", v), 0;
        p->name = xstrdup(v);
    } else if (strcmp(key, "header") == 0) {
        if (!*v)
            return error_at(r, r->lineno, "header is empty: expected a header as written in #include <...>"), 0;
        p->header = xstrdup(v);
    } else if (strcmp(key, "headers") == 0) {
        split(&p->headers, v, ",");
    } else if (strcmp(key, "prefix") == 0) {
        split(&p->prefixes, v, ",");
        for (size_t i = 0; i < p->prefixes.n; i++)
            if (!all_chars(p->prefixes.v[i], "_", 0))
                return error_at(r, r->lineno, "prefix = %s: expected a comma-separated list of name prefixes", v), 0;
        if (p->prefixes.n == 0)
            return error_at(r, r->lineno, "prefix is empty: expected a comma-separated list of name prefixes"), 0;
    } else if (strcmp(key, "library") == 0) {
        if (!*v)
            return error_at(r, r->lineno, "library is empty: expected the vendor library's soname"), 0;
        p->library = xstrdup(v);
    } else if (strcmp(key, "result") == 0) {
        if (!is_ident(v))
            return error_at(r, r->lineno, "result = %s: expected a type name", v), 0;
        p->result = xstrdup(v);
    } else if (strcmp(key, "success") == 0 || strcmp(key, "missing") == 0) {
        if (!is_value(v))
            return error_at(r, r->lineno, "%s = %s: expected a result code name or an integer", key, v), 0;
        if (key[0] == 's')
            p->success = xstrdup(v);
        else
            p->missing = xstrdup(v);
    } else if (strcmp(key, "results") == 0) {
        const char *dots = strstr(v, "..");
        int ok = strcmp(v, "enum") == 0;
        if (!ok && dots) {
            char *first = xstrndup(v, (size_t)(dots - v));
            ok = is_ident(first) && is_ident(dots + 2);
            free(first);
        }
        if (!ok)
            return error_at(r, r->lineno, "results = %s: expected enum or FIRST..LAST (two macro names)", v), 0;
        p->results = xstrdup(v);
    } else if (strcmp(key, "cflags") == 0) {
        split(&p->cflags, v, " \t");
    } else if (strcmp(key, "passthrough") == 0) {
        return read_passthrough(r, v);
    } else if (strcmp(key, "errcode") == 0) {
        if (!is_ident(v))
            return error_at(r, r->lineno, "errcode = %s: expected a parameter name", v), 0;
        p->errcode = xstrdup(v);
    }
    return 1;
}

static int site_value(reader *r, site_policy *sp, const char *key, const char *v)
{
    sp->nkeys++;
    if (strcmp(key, "transition") == 0)
        return parse_transition(r, v, &sp->transition);
    if (strcmp(key, "blocking") == 0) {
        if (strcmp(v, "yes") == 0)
            sp->blocking = 1;
        else if (strcmp(v, "no") == 0)
            sp->blocking = 0;
        else
            return error_at(r, r->lineno, "blocking = %s: expected yes or no", v), 0;
    } else if (strcmp(key, "reason") == 0) {
        if (!*v)
            return error_at(r, r->lineno, "reason is empty: expected why the call blocks"), 0;
        sp->reason = xstrdup(v);
    } else if (strcmp(key, "serialize") == 0) {
        if (!all_chars(v, "_.-", 0))
            return error_at(r, r->lineno, "serialize = %s: expected a domain name of letters, digits, _ . -", v), 0;
        sp->serialize = xstrdup(v);
    } else if (strcmp(key, "scope") == 0) {
        if (strcmp(v, "process") == 0)
            sp->scope = SCOPE_PROCESS;
        else if (strcmp(v, "handle") == 0)
            sp->scope = SCOPE_HANDLE;
        else
            return error_at(r, r->lineno, "scope = %s: expected process or handle", v), 0;
    } else if (strcmp(key, "variant_of") == 0) {
        if (!is_ident(v))
            return error_at(r, r->lineno, "variant_of = %s: expected an entry point name", v), 0;
        sp->variant_of = xstrdup(v);
        sp->variant_line = r->lineno;
    }
    return 1;
}

static int on_value(void *user, const char *sec, const char *key, const char *value)
{
    reader *r = user;
    section *s = r->cur;
    if (r->error)
        return 0;
    if (!s || strcmp(s->name, sec) != 0) {
        error_at(r, r->lineno, "%s = %s outside a section: expected [api], [defaults] or [entry point]", key, value);
        return 0;
    }
    const char *const *keys = keys_of(s->kind);
    int k = 0;
    while (keys[k] && strcmp(keys[k], key) != 0)
        k++;
    if (!keys[k]) {
        char *list = key_list(keys);
        error_at(r, r->lineno, "unknown key %s in [%s]: %s accepts %s", key, sec, section_label(s->kind), list);
        free(list);
        return 0;
    }
    if (s->key_line[k]) {
        error_at(r, r->lineno, "duplicate key %s in [%s] (first set at line %d)", key, sec, s->key_line[k]);
        return 0;
    }
    s->key_line[k] = r->lineno;

    switch (s->kind) {
    case SEC_API:
        return api_value(r, key, value);
    case SEC_DEFAULTS:
        return parse_transition(r, value, &r->p->default_transition);
    default:
        return site_value(r, policy_find_site(r->p, sec), key, value);
    }
}

/* Checks that need the whole file: required keys and keys that go together. */
static void check_complete(reader *r)
{
    policy *p = r->p;
    if (!p->api_line) {
        error_at(r, 1, "missing [api] section: it needs name, header, prefix and library");
        return;
    }
    const char *req[] = {"name", "header", "prefix", "library"};
    const void *val[] = {p->name, p->header, p->prefixes.n ? "" : NULL, p->library};
    for (int i = 0; i < 4; i++)
        if (!val[i])
            error_at(r, p->api_line, "[api] has no %s", req[i]);
    if (p->result) {
        if (!p->success)
            error_at(r, p->api_line, "[api] has result = %s but no success (the result code of success)", p->result);
        if (!p->missing)
            error_at(r, p->api_line, "[api] has result = %s but no missing (what calls return without the library)",
                     p->result);
    } else if (p->success || p->missing || p->results || p->errcode) {
        error_at(r, p->api_line, "[api] sets %s without result: name the result type first",
                 p->success   ? "success"
                 : p->missing ? "missing"
                 : p->results ? "results"
                              : "errcode");
    }
    for (size_t i = 0; i < p->nsites; i++) {
        site_policy *sp = &p->sites[i];
        if (sp->blocking == 1 && !sp->reason)
            error_at(r, sp->line, "[%s] has blocking = yes without reason: say why it blocks", sp->name);
        if (sp->reason && sp->blocking != 1)
            error_at(r, sp->line, "[%s] has a reason but not blocking = yes", sp->name);
        if (sp->variant_of && sp->nkeys > 1)
            error_at(r, sp->line, "[%s] is a variant_of %s and shares its policy: set the other keys on [%s]", sp->name,
                     sp->variant_of, sp->variant_of);
    }
}

int policy_read(const char *path, policy *p)
{
    memset(p, 0, sizeof *p);
    p->path = path;
    p->default_transition = TRANSITION_ALWAYS;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "callguard-gen: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    reader r = {.f = f, .p = p};
    int rc = ini_parse_stream(read_line, &r, on_value, &r);
    if (!r.error && ferror(f)) {
        fprintf(stderr, "callguard-gen: cannot read %s: %s\n", path, strerror(errno));
        r.error = 1;
    }
    fclose(f);
    if (!r.error && rc > 0)
        error_at(&r, rc, "syntax error: expected [section], key = value, or a ; comment");
    if (!r.error)
        check_complete(&r);
    for (size_t i = 0; i < r.nsecs; i++)
        free(r.secs[i].name);
    free(r.secs);
    return r.error;
}

site_policy *policy_find_site(const policy *p, const char *name)
{
    for (size_t i = 0; i < p->nsites; i++)
        if (strcmp(p->sites[i].name, name) == 0)
            return &p->sites[i];
    return NULL;
}

void policy_free(policy *p)
{
    free(p->name);
    free(p->header);
    strlist_free(&p->headers);
    strlist_free(&p->prefixes);
    free(p->library);
    free(p->result);
    free(p->success);
    free(p->missing);
    free(p->results);
    free(p->errcode);
    strlist_free(&p->cflags);
    strlist_free(&p->passthrough);
    for (size_t i = 0; i < p->nsites; i++) {
        free(p->sites[i].name);
        free(p->sites[i].reason);
        free(p->sites[i].serialize);
        free(p->sites[i].variant_of);
    }
    free(p->sites);
    memset(p, 0, sizeof *p);
}
