/* The quirks file: known driver bugs, each keyed by the API, the driver's
 * identity and version range (and where it applies, the version of a
 * library loaded in the process), each with its fix: entry points to
 * serialize in a lock domain (docs/quirks.md).
 *
 * The file is read with the policy files' reader (src/policy/policy_ini.c):
 * a file the user named (CALLGUARD_QUIRKS) when the process starts, the
 * shipped one when the first API initializes (a process that never does,
 * a shell or a compiler of a build under callguard run, never reads it).
 * Nothing more happens until an API initializes:
 * the layer's hand-written wrapper of its initializing call then calls
 * cg_layer_identify, which runs the layer's probe once per API (only when a
 * quirk names that API), matches every quirk of the API against the
 * drivers the probe saw, and for each match serializes the quirk's entry
 * points in its domain, in every layer of the process (and in layers that
 * join later), before the initializing call returns to the program. Sites
 * already serialized keep their domain: a user's own setting wins. A
 * driver outside every range changes no site, so its calls cost what they
 * cost without quirks. A quirk that matched but whose fix could not be
 * made (an entry point no layer has, no lock domain left) serializes
 * nothing and is recorded as not applied, with why. What matched goes to
 * the statistics region, which a process that dies keeps; stderr gets one
 * line per probe that left quirks not applied, however many. */
#define _GNU_SOURCE
#include "quirks.h"

#include "domain.h"
#include "../common/errors.h"
#include "python.h"
#include "resolve.h"
#include "signals.h"
#include "site.h"
#include "stats.h"
#include "values.h"

#include "../policy/policy_ini.h"

#include <dlfcn.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CGI_MAX_VENDORS 8
#define CGI_MAX_PROBED 8
#define CGI_MAX_IDS 16
/* An advice-only quirk's advice fits the record's not_applied after "advice only: ". */
#define CGI_ADVICE_MAX 200

typedef struct cgi_quirk {
    char name[64];
    char api[CGI_API_NAME_MAX];
    uint32_t vendor[CGI_MAX_VENDORS];
    unsigned nvendors;
    char *driver; /* fnmatch pattern, or NULL */
    pini_range versions;
    char *library; /* soname, or NULL */
    pini_range libversions;
    char *sites; /* comma-separated entry points, "a, b, c:shared": those of `shared` last, taken shared */
    char *versions_text, *library_text; /* as the file says them (advice) */
    char domain[CGI_DOMAIN_NAME_MAX];   /* "" for an advice-only quirk */
    cg_scope scope; /* the fix's: process, once (first calls only) or handle (per first input handle) */
    char *source, *why;
    char *advice;  /* what to do where no lock is the fix (an advice-only quirk), or NULL */
    char *waiters; /* waits_behind: entry points that wait behind the first of `sites`, or NULL */
    int applied;   /* its fix is on: layers that join later get it too */
    int matched;   /* a driver matched it (applied or not): matched once */
} cgi_quirk;

_Static_assert(sizeof(cgi_quirk_rec) == 1792, "quirk record layout is fixed");

typedef struct cgi_quirk_set {
    cgi_quirk *v;
    size_t n;
} cgi_quirk_set;

/* The quirks in use. Written under cgi_cfg_lock; cgi_quirks_apis is what
 * cg_layer_identify reads without it: a comma-separated copy of the APIs
 * that have quirks ("" when none). */
static cgi_quirk_set cgi_quirks;
static int cgi_quirks_chosen; /* CALLGUARD_QUIRKS said off or a file */
/* The shipped file, found at start-up and read at the first initialization
 * (cgi_quirks_load_default): 1 while it is still to be read. */
static _Atomic int cgi_quirks_default_pending;
static char cgi_quirks_default_path[PATH_MAX]; /* the directory of libcallguard */
static char cgi_quirks_apis[256];
static _Atomic size_t cgi_quirks_count; /* cgi_quirks.n, for cg_layer_identify's first look */

/* APIs probed already, in this process. cgi_probe_lock serializes probes;
 * it is recursive because a driver may call back into a wrapper that asks
 * again (it then returns: the API is being probed). */
static struct {
    char api[CGI_API_NAME_MAX];
    _Atomic int done;
} cgi_probed[CGI_MAX_PROBED];
static _Atomic unsigned cgi_nprobed;
static pthread_mutex_t cgi_probe_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
/* Guards cgi_quirks_apis only, held for a copy or a search: taken under
 * cgi_cfg_lock (a new file) and under cgi_probe_lock (a probe), never the
 * other way round. */
static pthread_mutex_t cgi_apis_lock = PTHREAD_MUTEX_INITIALIZER;

static void cgi_quirk_set_free(cgi_quirk_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].driver), free(s->v[i].library), free(s->v[i].sites);
        free(s->v[i].source), free(s->v[i].why), free(s->v[i].versions_text), free(s->v[i].library_text);
        free(s->v[i].advice), free(s->v[i].waiters);
    }
    free(s->v);
    s->v = NULL, s->n = 0;
}

/* ---- reading the file --------------------------------------------------------- */

static int cgi_add_vendor(const char *item, size_t n, void *arg)
{
    cgi_quirk *q = arg;
    char buf[24];
    if (n >= sizeof buf || q->nvendors == CGI_MAX_VENDORS) return 1;
    memcpy(buf, item, n);
    buf[n] = '\0';
    q->vendor[q->nvendors++] = (uint32_t)strtoul(buf, NULL, 0);
    return 0;
}

typedef struct cgi_check_site {
    pini_file *f;
    int line;
} cgi_check_site;

static int cgi_check_site_name(const char *item, size_t n, void *arg)
{
    cgi_check_site *c = arg;
    if (n < CGI_NAME_MAX) return 0;
    return pini_error(c->f, c->line, "serialize: '%.*s' is longer than an entry point name (%d characters)", (int)n,
                      item, CGI_NAME_MAX - 1);
}

/* The entry points as the report lists them: "a, b", those of `shared` as "c:shared". */
static int cgi_join_site(const char *item, size_t n, void *arg)
{
    char *out = arg;
    size_t len = strlen(out);
    sprintf(out + len, "%s%.*s", len ? ", " : "", (int)n, item);
    return 0;
}

static int cgi_join_shared(const char *item, size_t n, void *arg)
{
    cgi_join_site(item, n, arg);
    strcat(arg, CGI_QUIRK_SHARED);
    return 0;
}

/* An item of a quirk's sites: the length of its entry point's name, and
 * whether it is taken shared. */
static size_t cgi_site_item(const char *item, size_t n, int *shared)
{
    size_t k = strlen(CGI_QUIRK_SHARED);
    *shared = n > k && memcmp(item + n - k, CGI_QUIRK_SHARED, k) == 0;
    return *shared ? n - k : n;
}

static int cgi_quirk_section(pini_file *f, const pini_section *s, void *user)
{
    cgi_quirk_set *set = user;
    if (s->kind != PINI_QUIRK)
        return pini_error(f, s->line, "[%s] in a quirks file: expected only [quirk:NAME] sections (docs/quirks.md)",
                          s->name);
    const char *const *v = s->value;
    const char *name = s->name + strlen("quirk:");
    if (strlen(name) >= sizeof set->v->name)
        return pini_error(f, s->line, "[%s]: a quirk's NAME has at most %zu characters", s->name,
                          sizeof set->v->name - 1);
    if (strlen(v[PINI_Q_API]) >= CGI_API_NAME_MAX)
        return pini_error(f, s->key_line[PINI_Q_API], "api = %s: an API name has at most %d characters", v[PINI_Q_API],
                          CGI_API_NAME_MAX - 1);
    if (v[PINI_Q_DOMAIN] && strlen(v[PINI_Q_DOMAIN]) >= CGI_DOMAIN_NAME_MAX)
        return pini_error(f, s->key_line[PINI_Q_DOMAIN], "domain = %s: a domain name has at most %d characters",
                          v[PINI_Q_DOMAIN], CGI_DOMAIN_NAME_MAX - 1);
    /* "a, b, c:shared": at most twice as long as the lists, and 7 more an item of shared */
    size_t nsites = strlen(v[PINI_Q_SERIALIZE]) * 2 + (v[PINI_Q_SHARED] ? strlen(v[PINI_Q_SHARED]) * 9 + 2 : 0);
    char *sites = calloc(1, nsites + 1);
    if (!sites) return pini_error(f, s->line, "out of memory");
    pini_split(v[PINI_Q_SERIALIZE], ",", cgi_join_site, sites);
    if (v[PINI_Q_SHARED]) pini_split(v[PINI_Q_SHARED], ",", cgi_join_shared, sites);
    size_t joined = strlen(sites);
    free(sites);
    if (joined >= sizeof((cgi_quirk_rec *)0)->sites || strlen(v[PINI_Q_SOURCE]) >= sizeof((cgi_quirk_rec *)0)->source ||
        strlen(v[PINI_Q_WHY]) >= sizeof((cgi_quirk_rec *)0)->why ||
        (v[PINI_Q_ADVICE] && strlen(v[PINI_Q_ADVICE]) > CGI_ADVICE_MAX) ||
        (v[PINI_Q_WAITS_BEHIND] && strlen(v[PINI_Q_WAITS_BEHIND]) >= sizeof((cgi_quirk_rec *)0)->waiters))
        return pini_error(f, s->line,
                          "[%s]: serialize with shared (\"a, b, c:shared\"), source, why and waits_behind have at "
                          "most 255 characters each, advice %d",
                          s->name, CGI_ADVICE_MAX);
    cgi_check_site c = {f, s->key_line[PINI_Q_SERIALIZE]};
    if (pini_split(v[PINI_Q_SERIALIZE], ",", cgi_check_site_name, &c)) return PINI_EFORMAT;
    c.line = s->key_line[PINI_Q_SHARED];
    if (v[PINI_Q_SHARED] && pini_split(v[PINI_Q_SHARED], ",", cgi_check_site_name, &c)) return PINI_EFORMAT;
    c.line = s->key_line[PINI_Q_WAITS_BEHIND];
    if (v[PINI_Q_WAITS_BEHIND] && pini_split(v[PINI_Q_WAITS_BEHIND], ",", cgi_check_site_name, &c)) return PINI_EFORMAT;
    cgi_quirk *more = realloc(set->v, (set->n + 1) * sizeof *more);
    if (!more) return pini_error(f, s->line, "out of memory");
    set->v = more;
    cgi_quirk *q = &set->v[set->n++];
    memset(q, 0, sizeof *q);
    snprintf(q->name, sizeof q->name, "%s", name);
    snprintf(q->api, sizeof q->api, "%s", v[PINI_Q_API]);
    snprintf(q->domain, sizeof q->domain, "%s", v[PINI_Q_DOMAIN] ? v[PINI_Q_DOMAIN] : "");
    int word = v[PINI_Q_SCOPE] ? pini_word(PINI_Q_SCOPE, v[PINI_Q_SCOPE]) : 0; /* process, once, handle */
    q->scope = word == 1 ? CG_SCOPE_ONCE : word == 2 ? CG_SCOPE_HANDLE : CG_SCOPE_PROCESS;
    q->advice = v[PINI_Q_ADVICE] ? strdup(v[PINI_Q_ADVICE]) : NULL;
    q->waiters = v[PINI_Q_WAITS_BEHIND] ? strdup(v[PINI_Q_WAITS_BEHIND]) : NULL;
    if (v[PINI_Q_VENDOR] && pini_split(v[PINI_Q_VENDOR], ",", cgi_add_vendor, q))
        return pini_error(f, s->key_line[PINI_Q_VENDOR], "vendor = %s: at most %d vendor ids", v[PINI_Q_VENDOR],
                          CGI_MAX_VENDORS);
    pini_range_read(v[PINI_Q_VERSIONS], &q->versions);
    if (v[PINI_Q_LIBRARY]) {
        size_t n = pini_library_read(v[PINI_Q_LIBRARY], &q->libversions);
        q->library = strndup(v[PINI_Q_LIBRARY], n);
    }
    q->driver = v[PINI_Q_DRIVER] ? strdup(v[PINI_Q_DRIVER]) : NULL;
    q->sites = calloc(1, nsites + 1);
    if (q->sites) pini_split(v[PINI_Q_SERIALIZE], ",", cgi_join_site, q->sites);
    if (q->sites && v[PINI_Q_SHARED]) pini_split(v[PINI_Q_SHARED], ",", cgi_join_shared, q->sites);
    q->source = strdup(v[PINI_Q_SOURCE]);
    q->why = strdup(v[PINI_Q_WHY]);
    q->versions_text = strdup(v[PINI_Q_VERSIONS]);
    q->library_text = v[PINI_Q_LIBRARY] ? strdup(v[PINI_Q_LIBRARY]) : NULL;
    if ((v[PINI_Q_LIBRARY] && (!q->library || !q->library_text)) || (v[PINI_Q_DRIVER] && !q->driver) || !q->sites ||
        !q->source || !q->why || !q->versions_text || (v[PINI_Q_ADVICE] && !q->advice) ||
        (v[PINI_Q_WAITS_BEHIND] && !q->waiters))
        return pini_error(f, s->line, "out of memory");
    return 0;
}

static int cgi_quirks_read(const char *path, cgi_quirk_set *out)
{
    char err[600];
    memset(out, 0, sizeof *out);
    int rc = pini_read(path, cgi_quirk_section, out, err, sizeof err);
    if (rc == PINI_OK) return CG_OK;
    cgi_quirk_set_free(out);
    /* The reader says "policy file" of what it cannot open: this one is a quirks file. */
    const char *pf = strstr(err, "policy file ");
    if (pf) memcpy((char *)pf, "quirks file", 11);
    return cgi_fail(rc == PINI_EIO ? CG_EIO : rc == PINI_ENOMEM ? CG_ENOMEM : CG_EFORMAT, "%s", err);
}

static void cgi_quirks_use(cgi_quirk_set *set)
{
    cgi_quirk_set_free(&cgi_quirks);
    cgi_quirks = *set;
    size_t len = 0;
    char apis[sizeof cgi_quirks_apis] = "";
    for (size_t i = 0; i < set->n; i++) {
        char item[CGI_API_NAME_MAX + 2];
        snprintf(item, sizeof item, ",%s,", set->v[i].api);
        if (strstr(apis, item) || len + strlen(item) >= sizeof apis) continue;
        memcpy(apis + len, item, strlen(item) + 1);
        len += strlen(item) - 1; /* the trailing comma starts the next item */
    }
    pthread_mutex_lock(&cgi_apis_lock);
    memcpy(cgi_quirks_apis, apis, sizeof apis);
    pthread_mutex_unlock(&cgi_apis_lock);
    atomic_store(&cgi_quirks_count, set->n);
}

int cgi_quirks_set_locked(const char *value)
{
    if (!value || !*value)
        return cgi_fail(CG_EINVAL, "empty value: expected off, or the path of a quirks file (docs/quirks.md)");
    cgi_quirk_set set = {0};
    if (strcmp(value, "off") != 0) {
        int rc = cgi_quirks_read(value, &set);
        if (rc != CG_OK) return rc;
    }
    cgi_quirks_use(&set);
    cgi_quirks_chosen = 1;
    atomic_store(&cgi_quirks_default_pending, 0);
    return CG_OK;
}

#ifndef CG_QUIRKS_REL
#define CG_QUIRKS_REL "../share/callguard/quirks.ini"
#endif

/* Where the shipped file is is decided now (libcallguard's own path: the
 * program may change its working directory later); it is read when an API
 * initializes. */
void cgi_quirks_default(void)
{
    if (cgi_quirks_chosen) return;
    Dl_info info;
    if (!dladdr((const void *)cgi_quirks_default, &info) || !info.dli_fname || !strchr(info.dli_fname, '/')) return;
    int dir = (int)(strrchr(info.dli_fname, '/') - info.dli_fname);
    if (snprintf(cgi_quirks_default_path, sizeof cgi_quirks_default_path, "%.*s", dir, info.dli_fname) >=
        (int)sizeof cgi_quirks_default_path)
        return;
    atomic_store(&cgi_quirks_default_pending, 1);
}

/* The shipped file, the first time an API initializes. A missing file
 * means no quirks; a broken one is named on stderr and ignored. */
static void cgi_quirks_load_default(void)
{
    pthread_mutex_lock(&cgi_cfg_lock);
    if (atomic_load(&cgi_quirks_default_pending) && !cgi_quirks_chosen) {
        atomic_store(&cgi_quirks_default_pending, 0);
        /* The install layout's, then the build tree's (lib/../share). */
        const char *rel[] = {CG_QUIRKS_REL, "../share/callguard/quirks.ini"};
        for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
            char path[PATH_MAX];
            if (snprintf(path, sizeof path, "%s/%s", cgi_quirks_default_path, rel[i]) >= (int)sizeof path) continue;
            if (access(path, F_OK) != 0) continue;
            cgi_quirk_set set;
            if (cgi_quirks_read(path, &set) != CG_OK)
                cgi_say("the shipped quirks file is not used: %s", cg_last_error());
            else
                cgi_quirks_use(&set);
            break;
        }
    }
    pthread_mutex_unlock(&cgi_cfg_lock);
}

void cgi_quirks_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP, plain = PTHREAD_MUTEX_INITIALIZER;
    cgi_probe_lock = fresh;
    cgi_apis_lock = plain;
}

/* ---- applying ------------------------------------------------------------------- */

typedef struct cgi_apply {
    const cgi_quirk *q;
    cg_layer *only; /* NULL: every layer */
    uint32_t dom;
    char *missing; /* the entry points no layer has, "a, b" (cgi_quirk_fixable) */
    size_t cap;
    const cg_layer *lacking; /* the layer of the first of them */
} cgi_apply;

static void cgi_serialize_site(cg_site *s, const cgi_apply *a, int shared)
{
    if (atomic_load(&s->domain) != 0) return; /* serialized already: that setting wins */
    atomic_store(&s->scope, shared ? CG_SCOPE_SHARED : a->q->scope);
    atomic_store(&s->domain, a->dom);
}

static int cgi_apply_item(const char *item, size_t n, void *arg)
{
    cgi_apply *a = arg;
    char name[CGI_NAME_MAX];
    int shared;
    snprintf(name, sizeof name, "%.*s", (int)cgi_site_item(item, n, &shared), item);
    for (cg_layer *l = cgi_layers; l; l = l->next) {
        if (a->only && l != a->only) continue;
        for (unsigned i = 0; i < l->nsites; i++) {
            if (strcmp(l->sites[i].name, name) != 0) continue;
            unsigned base = l->sites[i].base;
            for (unsigned k = 0; k < l->nsites; k++)
                if (l->sites[k].base == base) {
                    cgi_serialize_site(&l->sites[k], a, shared);
                    cgi_site_refresh(&l->sites[k]);
                }
            cgi_stats_note_policy(&l->sites[base]);
        }
    }
    return 0;
}

/* Adds an entry point of the quirk to a->missing when the loaded layer of
 * its API (by prefix) lacks it. A name no loaded layer's prefixes claim is
 * another API's, serialized when that layer joins (cgi_quirks_apply_layer). */
static int cgi_find_item(const char *item, size_t n, void *arg)
{
    cgi_apply *a = arg;
    char name[CGI_NAME_MAX];
    int shared;
    snprintf(name, sizeof name, "%.*s", (int)cgi_site_item(item, n, &shared), item);
    const cg_layer *l = cgi_layer_for_name(name);
    if (!l || cgi_site_find(name)) return 0;
    if (!a->lacking) a->lacking = l;
    size_t len = strlen(a->missing);
    snprintf(a->missing + len, a->cap - len, "%s%s", len ? ", " : "", name);
    return 0;
}

/* Whether the quirk's fix can be made whole: each entry point it names is
 * a site of the loaded layer of its API (the quirk's own API's layer is
 * loaded by now: the probe runs in its initializing call), and its domain
 * exists or can be made. 1, or 0 with why (one line). Caller holds
 * cgi_cfg_lock. */
static int cgi_quirk_fixable(const cgi_quirk *q, uint32_t *dom, char *why, size_t cap)
{
    char missing[256] = "";
    cgi_apply a = {q, NULL, 0, missing, sizeof missing, NULL};
    pini_split(q->sites, ",", cgi_find_item, &a);
    if (missing[0]) {
        /* The layer guards what its header declares: a name of a newer
         * version of the API (zeInitDrivers, 1.8.12's header has none)
         * cannot be serialized by this build, whatever the real library has. */
        snprintf(why, cap,
                 "%s %s of the loaded %s layer (not declared by %s, which it was generated from): nothing "
                 "serialized (a typo, or a name of a newer version of the API)",
                 missing, strchr(missing, ',') ? "are not entry points" : "is not an entry point", a.lacking->api,
                 a.lacking->header ? a.lacking->header : "the header");
        return 0;
    }
    if (cgi_domain_get(q->domain, q->scope, dom) != CG_OK) {
        snprintf(why, cap, "domain %s: %s; nothing serialized", q->domain, cg_last_error());
        return 0;
    }
    return 1;
}

/* Serializes the quirk's entry points in its domain (made already:
 * cgi_quirk_fixable). Caller holds cgi_cfg_lock. */
static void cgi_quirk_apply(const cgi_quirk *q, cg_layer *only)
{
    cgi_apply a = {q, only, 0, NULL, 0, NULL};
    if (cgi_domain_get(q->domain, q->scope, &a.dom) != CG_OK) return;
    pini_split(q->sites, ",", cgi_apply_item, &a);
}

void cgi_quirks_apply_layer(cg_layer *l)
{
    for (size_t i = 0; i < cgi_quirks.n; i++)
        if (cgi_quirks.v[i].applied) cgi_quirk_apply(&cgi_quirks.v[i], l);
}

/* ---- matching ------------------------------------------------------------------ */

typedef struct cgi_lib_seen {
    const char *soname;
    char found[PATH_MAX];
} cgi_lib_seen;

/* Whether file name `base` is the soname or a file named after it. */
static int cgi_soname_file(const char *base, const char *soname)
{
    size_t n = strlen(soname);
    return strncmp(base, soname, n) == 0 && (!base[n] || base[n] == '.');
}

/* Whether a real file's name is the soname's library with a version of its
 * own after ".so.": NVIDIA's libcuda.so.1 is a link to libcuda.so.595.84. */
static int cgi_soname_release(const char *base, const char *soname)
{
    const char *so = strstr(soname, ".so.");
    size_t n = so ? (size_t)(so - soname) + 4 : 0;
    return n && strncmp(base, soname, n) == 0 && base[n] >= '0' && base[n] <= '9';
}

/* The loaded object whose file is the soname, or a file named after it
 * (libigc.so.2 -> libigc.so.2.38.2), by its own name or by the file it
 * resolves to (callguard run links the real library under another name),
 * which may also carry a release of its own (libcuda.so.595.84). */
static int cgi_find_library(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    cgi_lib_seen *seen = arg;
    if (!info->dlpi_name || !*info->dlpi_name) return 0;
    /* Not callguard's own soname shim (libze_loader.so.1, no version in its
     * name): it would stand for the real library and hide its version. */
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            if (cgi_is_callguard_object((const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr))) return 0;
            break;
        }
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    char real[PATH_MAX];
    const char *path = realpath(info->dlpi_name, real) ? real : info->dlpi_name;
    const char *rbase = strrchr(path, '/');
    rbase = rbase ? rbase + 1 : path;
    if (!cgi_soname_file(base, seen->soname) && !cgi_soname_file(rbase, seen->soname) &&
        !cgi_soname_release(rbase, seen->soname))
        return 0;
    snprintf(seen->found, sizeof seen->found, "%s", rbase);
    return 1;
}

/* A quirk's library condition: 1 when it holds or cannot be told (the
 * library is not loaded yet, its file name carries no version), with what
 * was seen in `note`; 0 when the loaded library's version is outside. */
static int cgi_library_holds(const cgi_quirk *q, char *note, size_t cap)
{
    note[0] = '\0';
    if (!q->library) return 1;
    cgi_lib_seen seen = {q->library, ""};
    dl_iterate_phdr(cgi_find_library, &seen);
    if (!seen.found[0]) {
        snprintf(note, cap, "%s not loaded yet: matched on the driver alone", q->library);
        return 1;
    }
    const char *so = strstr(seen.found, ".so.");
    pini_version_t v = {0};
    /* The soname itself (libcuda.so.1) says only the ABI's major: no version. */
    if (so && strcmp(seen.found, q->library) != 0) pini_version(so + 4, strlen(so + 4), &v);
    if (!v.n) {
        snprintf(note, cap, "%s has no version in its file name: matched on the driver alone", seen.found);
        return 1;
    }
    snprintf(note, cap, "%s", seen.found);
    return pini_range_has(&q->libversions, &v);
}

static int cgi_identity_matches(const cgi_quirk *q, const cg_identity *id)
{
    if (q->nvendors) {
        int any = 0;
        for (unsigned k = 0; k < q->nvendors; k++)
            any |= q->vendor[k] == id->vendor;
        if (!any) return 0;
    }
    if (q->driver && fnmatch(q->driver, id->name, 0) != 0) return 0;
    pini_version_t v;
    if (!pini_version(id->version, strlen(id->version), &v)) return 0;
    return pini_range_has(&q->versions, &v);
}

static void cgi_copy(char *dst, size_t cap, const char *src) { snprintf(dst, cap, "%s", src ? src : ""); }

/* The record of a matched quirk, kept while the region has room; the
 * ones past CGI_STATS_MAX_QUIRKS are counted. Only quirks.c writes these
 * records, under cgi_cfg_lock. */
static void cgi_quirk_note(const cgi_quirk_rec *rec)
{
    unsigned used = 0;
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++)
        used += atomic_load(&cgi_stats->quirk[i].valid) != 0;
    if (used == CGI_STATS_MAX_QUIRKS)
        atomic_fetch_add(&cgi_stats->h.quirks_dropped, 1);
    else
        cgi_stats_note_quirk(rec);
}

/* Caller holds cgi_cfg_lock. */
static void cgi_quirks_match(const char *api, const cg_identity *ids, unsigned n)
{
    size_t matched = 0, failed = 0;
    char first[320] = "";
    for (size_t i = 0; i < cgi_quirks.n; i++) {
        cgi_quirk *q = &cgi_quirks.v[i];
        if (q->matched || strcmp(q->api, api) != 0) continue;
        for (unsigned k = 0; k < n; k++) {
            if (!cgi_identity_matches(q, &ids[k])) continue;
            cgi_quirk_rec rec;
            memset(&rec, 0, sizeof rec);
            if (!cgi_library_holds(q, rec.library, sizeof rec.library)) break;
            q->matched = 1;
            matched++;
            uint32_t dom;
            if (q->advice) {
                /* No lock is its fix: recorded, for the report and its advice. */
                snprintf(rec.not_applied, sizeof rec.not_applied, "advice only: %s", q->advice);
            } else if (cgi_quirk_fixable(q, &dom, rec.not_applied, sizeof rec.not_applied)) {
                q->applied = rec.applied = 1;
                cgi_quirk_apply(q, NULL);
            } else if (!failed++) {
                snprintf(first, sizeof first, "%s: %s", q->name, rec.not_applied);
            }
            rec.vendor = ids[k].vendor;
            cgi_copy(rec.api, sizeof rec.api, api);
            cgi_copy(rec.name, sizeof rec.name, q->name);
            cgi_copy(rec.domain, sizeof rec.domain, q->domain);
            cgi_copy(rec.sites, sizeof rec.sites, q->sites);
            cgi_copy(rec.waiters, sizeof rec.waiters, q->waiters);
            cgi_copy(rec.source, sizeof rec.source, q->source);
            cgi_copy(rec.why, sizeof rec.why, q->why);
            cgi_copy(rec.driver, sizeof rec.driver, ids[k].name);
            cgi_copy(rec.version, sizeof rec.version, ids[k].version);
            cgi_quirk_note(&rec);
            break;
        }
    }
    /* One line, however many: a file of thousands must not flood the
     * program's stderr. Each one is in the report. */
    if (failed)
        cgi_say("%zu of the %zu quirks matching the %s driver %s not applied (the report says why for each); the "
                "first, %s",
                failed, matched, api, failed == 1 ? "was" : "were", first);
}

/* ---- the layer's side ------------------------------------------------------------ */

static int cgi_probe_done(const char *api)
{
    unsigned n = atomic_load_explicit(&cgi_nprobed, memory_order_acquire);
    for (unsigned i = 0; i < n; i++)
        if (strcmp(cgi_probed[i].api, api) == 0) return atomic_load_explicit(&cgi_probed[i].done, memory_order_acquire);
    return 0;
}

typedef struct cgi_identify_args {
    cg_layer *layer;
    cg_probe probe;
} cgi_identify_args;

/* The probe and the matching, under cgi_probe_lock (cg_layer_identify). */
static void cgi_identify(void *arg)
{
    cg_layer *layer = ((cgi_identify_args *)arg)->layer;
    cg_probe probe = ((cgi_identify_args *)arg)->probe;
    pthread_mutex_lock(&cgi_probe_lock);
    char item[CGI_API_NAME_MAX + 2];
    snprintf(item, sizeof item, ",%s,", layer->api);
    unsigned n = atomic_load(&cgi_nprobed), i = 0;
    while (i < n && strcmp(cgi_probed[i].api, layer->api) != 0)
        i++;
    pthread_mutex_lock(&cgi_apis_lock);
    int wanted = strstr(cgi_quirks_apis, item) != NULL;
    pthread_mutex_unlock(&cgi_apis_lock);
    /* Probed, being probed by this thread (a call back from the driver), no
     * quirk for this API, or no room: nothing to do. */
    if (i < n || !wanted || n == CGI_MAX_PROBED) {
        pthread_mutex_unlock(&cgi_probe_lock);
        return;
    }
    snprintf(cgi_probed[n].api, sizeof cgi_probed[n].api, "%s", layer->api);
    atomic_store_explicit(&cgi_nprobed, n + 1, memory_order_release);
    static cg_identity ids[CGI_MAX_IDS]; /* under cgi_probe_lock; off the stack of a thread we do not own */
    memset(ids, 0, sizeof ids);
    unsigned got = probe(layer, ids, CGI_MAX_IDS);
    if (got > CGI_MAX_IDS) got = CGI_MAX_IDS;
    for (unsigned k = 0; k < got; k++) {
        ids[k].name[sizeof ids[k].name - 1] = '\0';
        ids[k].version[sizeof ids[k].version - 1] = '\0';
    }
    pthread_mutex_lock(&cgi_cfg_lock);
    cgi_quirks_match(layer->api, ids, got);
    pthread_mutex_unlock(&cgi_cfg_lock);
    /* After the matching: a quirk of this API without a record did not match. */
    cgi_stats_note_probed(layer->api);
    atomic_store_explicit(&cgi_probed[n].done, 1, memory_order_release);
    pthread_mutex_unlock(&cgi_probe_lock);
}

void cg_layer_identify(cg_layer *layer, cg_probe probe)
{
    if (!layer || !probe || !layer->api) return;
    if (atomic_load_explicit(&cgi_quirks_default_pending, memory_order_acquire)) cgi_quirks_load_default();
    if (!atomic_load_explicit(&cgi_quirks_count, memory_order_relaxed) || cgi_probe_done(layer->api)) return;
    cgi_identify_args a = {layer, probe};
    /* Where callguard releases the runtime, the probe runs outside it, as a
     * guarded call does: it calls the driver and walks the loaded objects
     * under the dynamic loader's lock, whose holder may be waiting for the
     * runtime (the GIL and loader-lock deadlock of triton PR #11265), and a
     * thread waiting here for another's probe must not hold it either. */
    const cg_adapter *ad = atomic_load_explicit(&cgi_cfg.adapter, memory_order_acquire);
    if (ad && atomic_load_explicit(&cgi_cfg.adapter_mode, memory_order_relaxed) == CG_ADAPTER_ACTIVE &&
        (ad == &cgi_cpython_adapter ? cgi_py_holds() : ad->holds())) {
        ad->call_outside(cgi_identify, &a);
        return;
    }
    cgi_identify(&a);
}

void *cg_real_function(cg_layer *layer, const char *name)
{
    if (!layer || !name) return NULL;
    for (unsigned i = 0; i < layer->nsites; i++) {
        cg_site *s = &layer->sites[i];
        if (strcmp(s->name, name) != 0) continue;
        void *real = atomic_load_explicit(&s->real, memory_order_acquire);
        if (real) return real;
        real = cgi_resolve_site(layer, name);
        /* One its policy leaves uncounted is left unresolved: the program's first call, through the
         * runtime, then notes that it was called (the report's "uncounted"). */
        if (!real || atomic_load(&s->uncounted)) return real;
        pthread_mutex_lock(&cgi_cfg_lock);
        atomic_store_explicit(&s->real, real, memory_order_release);
        cgi_site_refresh(s);
        pthread_mutex_unlock(&cgi_cfg_lock);
        return real;
    }
    return cgi_resolve(layer, name);
}

/* ---- advice (src/report/advice.c) ----------------------------------------------
 * Every quirk is checked against what a run saw, whatever driver ran: the
 * report's advice names the quirks of the entry points several threads
 * were inside at once. */

static int cgi_names_site(const char *item, size_t n, void *arg)
{
    const char *name = arg;
    int shared;
    n = cgi_site_item(item, n, &shared);
    return strlen(name) == n && strncmp(item, name, n) == 0;
}

typedef struct cgi_kept {
    char *out;
    size_t cap;
    int whole; /* 0: a loaded layer's API has a name its layer lacks */
} cgi_kept;

static int cgi_keep_site(const char *item, size_t n, void *arg)
{
    cgi_kept *k = arg;
    char name[CGI_NAME_MAX];
    int shared;
    snprintf(name, sizeof name, "%.*s", (int)cgi_site_item(item, n, &shared), item);
    if (!cgi_site_find(name)) {
        if (cgi_layer_for_name(name)) k->whole = 0; /* refused by every run */
        if (!k->whole || cgi_in_cli) return 0;      /* in the CLI: an API the run left out */
    }
    size_t len = strlen(k->out);
    snprintf(k->out + len, k->cap - len, "%s%s%s", len ? ", " : "", name, shared ? CGI_QUIRK_SHARED : "");
    return 0;
}

/* The quirk's entry points as a fix the run takes, or NULL when there is
 * none. In `callguard run` the layers loaded here are the run's (--api),
 * which refuse --serialize of any other name: the fix names only theirs.
 * Elsewhere (a process's own report) every name of the quirk, which a
 * plain `callguard run` takes. A name of a loaded layer's API that the
 * layer lacks (zeInitDrivers: 1.8.12's header has none) is refused by
 * every run, and leaving it out would not fix the bug: no fix, so no
 * advice. With no layer loaded (`callguard report`) every name. */
static const char *cgi_run_sites(const cgi_quirk *q, char *kept, size_t cap)
{
    if (!cgi_layers) return q->sites;
    kept[0] = '\0';
    cgi_kept k = {kept, cap, 1};
    pini_split(q->sites, ",", cgi_keep_site, &k);
    return k.whole && kept[0] ? kept : NULL;
}

void cgi_quirks_naming(const char *name, void (*fn)(const cgi_quirk_view *, void *), void *arg)
{
    /* The CLI makes no driver call and so read no file at start-up: the
     * shipped one now, unless --quirks chose one or off (cgi_quirks_default
     * says). Once: a program's own file is read once too. */
    static _Atomic int looked;
    if (cgi_in_cli && !atomic_exchange(&looked, 1)) cgi_quirks_default();
    if (atomic_load_explicit(&cgi_quirks_default_pending, memory_order_acquire)) cgi_quirks_load_default();
    pthread_mutex_lock(&cgi_cfg_lock);
    for (size_t i = 0; i < cgi_quirks.n; i++) {
        const cgi_quirk *q = &cgi_quirks.v[i];
        if (!pini_split(q->sites, ",", cgi_names_site, (void *)name)) continue;
        cgi_quirk_view v = {q->name,
                            q->api,
                            q->sites,
                            q->domain,
                            q->source,
                            q->why,
                            q->versions_text,
                            q->library_text,
                            q->driver,
                            q->vendor,
                            q->nvendors,
                            q->advice,
                            q->scope == CG_SCOPE_ONCE,
                            q->scope == CG_SCOPE_HANDLE};
        char kept[sizeof((cgi_quirk_rec *)0)->sites];
        /* An advice-only quirk's entry points are only watched: no run takes a fix of them. */
        if (!q->advice) v.sites = cgi_run_sites(q, kept, sizeof kept);
        if (v.sites) fn(&v, arg);
    }
    pthread_mutex_unlock(&cgi_cfg_lock);
}
