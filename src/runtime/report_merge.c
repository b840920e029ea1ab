/* Reports of whole process trees, and saved reports read back.
 *
 * `callguard run` leaves one statistics file per process in a directory;
 * cg_report_merge maps them all and writes one report. A saved JSON report
 * is read back by turning it into the same in-memory regions, so a table
 * printed from a saved file is the table the run printed. */
#define _GNU_SOURCE
#include "report.h"

#include "errors.h"
#include "names.h"
#include "trace_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int cgi_by_start(const void *a, const void *b)
{
    const cgi_proc_view *x = a, *y = b;
    if (x->region->h.start_unix_ns != y->region->h.start_unix_ns)
        return x->region->h.start_unix_ns < y->region->h.start_unix_ns ? -1 : 1;
    return x->region->h.pid - y->region->h.pid;
}

/* Each trace file's counts go to the process it pairs with (same pid and
 * start): a report says how many timeline events were dropped. */
static void cgi_note_traces(const char *dir, cgi_proc_view *v, size_t n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".trace") != 0) continue;
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
            if (fd >= 0) close(fd);
            continue;
        }
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) continue;
        cgi_trace_view *tv = malloc(sizeof *tv);
        if (tv && cgi_trace_view_of_file(p, (size_t)st.st_size, tv) == 0)
            for (size_t i = 0; i < n; i++)
                if (v[i].region->h.pid == tv->h->pid && v[i].region->h.start_unix_ns == tv->h->stats_start_unix_ns) {
                    uint64_t kept, dropped;
                    cgi_trace_count(tv, &kept, &dropped);
                    v[i].have_trace = 1;
                    v[i].trace_events += kept;
                    v[i].trace_dropped += dropped;
                }
        free(tv);
        munmap(p, (size_t)st.st_size);
    }
    if (d) closedir(d);
}

/* A string field of a statistics file, made one NUL-terminated line
 * without control characters. Writes only where something is wrong, so the
 * pages of a sane file stay shared with the page cache. */
static void cgi_fix_str(char *f, size_t cap)
{
    size_t n = strnlen(f, cap);
    if (n == cap) f[--n] = '\0';
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)f[i] < 0x20 || f[i] == 0x7f) f[i] = '?';
}

/* Every field the reports read, checked: the record count within the
 * file, strings terminated and printable, policy values in range. */
static void cgi_stats_sanitize(cgi_stats_region *r)
{
    if (atomic_load(&r->h.nrecords) > CGI_STATS_MAX_RECORDS) atomic_store(&r->h.nrecords, CGI_STATS_MAX_RECORDS);
    cgi_fix_str(r->h.command, sizeof r->h.command);
    cgi_fix_str(r->h.host, sizeof r->h.host);
    uint32_t n = atomic_load(&r->h.nrecords);
    for (uint32_t k = 0; k < n; k++) {
        cgi_stats_record *rec = &r->r[k];
        cgi_fix_str(rec->api, sizeof rec->api);
        cgi_fix_str(rec->name, sizeof rec->name);
        cgi_fix_str(rec->domain, sizeof rec->domain);
        if (rec->transition >= CGI_NTRANSITIONS) rec->transition = 0;
        if (rec->scope >= CGI_NSCOPES) rec->scope = 0;
        if (rec->blocking > 1) rec->blocking = 1;
    }
    for (unsigned i = 0; i < CGI_STATS_MAX_STALLS; i++) {
        cgi_stall *st = &r->stall[i];
        if (!atomic_load(&st->valid)) continue;
        cgi_fix_str(st->api, sizeof st->api);
        cgi_fix_str(st->name, sizeof st->name);
        cgi_fix_str(st->thread, sizeof st->thread);
        cgi_fix_str(st->runtime, sizeof st->runtime);
        cgi_fix_str(st->py_file, sizeof st->py_file);
        cgi_fix_str(st->py_func, sizeof st->py_func);
    }
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++) {
        cgi_quirk_rec *q = &r->quirk[i];
        if (!atomic_load(&q->valid)) continue;
        cgi_fix_str(q->api, sizeof q->api);
        cgi_fix_str(q->name, sizeof q->name);
        cgi_fix_str(q->domain, sizeof q->domain);
        cgi_fix_str(q->sites, sizeof q->sites);
        cgi_fix_str(q->source, sizeof q->source);
        cgi_fix_str(q->why, sizeof q->why);
        cgi_fix_str(q->driver, sizeof q->driver);
        cgi_fix_str(q->version, sizeof q->version);
        cgi_fix_str(q->library, sizeof q->library);
    }
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        cgi_slot *slot = &r->slot[i];
        if (atomic_load(&slot->tid) == 0) continue;
        for (size_t c = 0; c < sizeof slot->thread; c++)
            if (slot->thread[c] && ((unsigned char)slot->thread[c] < 0x20 || slot->thread[c] == 0x7f))
                slot->thread[c] = '?';
    }
}

int cgi_stats_map_dir(const char *dir, const cg_proc_exit *exits, size_t nexits, cgi_proc_view **out, size_t *count)
{
    DIR *d = dir ? opendir(dir) : NULL;
    /* Removed during the run: no process left a file; the report says how
     * many the CLI reaped. */
    if (!d && dir && errno == ENOENT) {
        *out = calloc(1, sizeof **out);
        *count = 0;
        return *out ? CG_OK : cgi_fail(CG_ENOMEM, "out of memory");
    }
    if (!d) return cgi_fail(CG_EIO, "cannot read statistics directory %s: %s", dir ? dir : "(null)", strerror(errno));
    size_t n = 0, cap = 16;
    cgi_proc_view *v = calloc(cap, sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".stats") != 0) continue;
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(cgi_stats_region)) {
            if (fd >= 0) close(fd);
            continue;
        }
        /* Private and writable: the file was written by the guarded
         * program, so each field is checked and repaired in our copy of
         * the page it is on (cgi_stats_sanitize); the file is untouched. */
        void *p = mmap(NULL, sizeof(cgi_stats_region), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        close(fd);
        if (p == MAP_FAILED) continue;
        cgi_stats_region *r = p;
        if (memcmp(r->h.magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC) != 0 || r->h.version != CGI_STATS_VERSION) {
            munmap(p, sizeof(cgi_stats_region));
            continue;
        }
        cgi_stats_sanitize(r);
        if (n == cap) {
            cgi_proc_view *nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv) break;
            v = nv, cap *= 2;
        }
        v[n++] = (cgi_proc_view){.region = r};
    }
    closedir(d);
    if (!v) return cgi_fail(CG_ENOMEM, "out of memory");
    qsort(v, n, sizeof *v, cgi_by_start);

    /* How each process ended: what the CLI reaped is exact; an image that
     * was replaced by exec left a later file with the same pid; a process
     * that called exit() wrote its status in its own header. */
    for (size_t i = 0; i < n; i++) {
        int pid = v[i].region->h.pid;
        int later = 0;
        for (size_t j = i + 1; j < n; j++)
            if (v[j].region->h.pid == pid) later = 1;
        if (later) {
            v[i].have_exit = 1;
            v[i].exit_state = CGI_PROC_EXECED;
            continue;
        }
        for (size_t k = 0; k < nexits; k++)
            if (exits[k].pid == pid) {
                v[i].have_exit = 1;
                v[i].exit_state = exits[k].signaled ? CGI_PROC_SIGNALED : CGI_PROC_EXITED;
                v[i].exit_status = exits[k].status;
            }
    }
    cgi_note_traces(dir, v, n);
    *out = v;
    *count = n;
    return CG_OK;
}

void cgi_stats_unmap_dir(cgi_proc_view *v, size_t n)
{
    for (size_t i = 0; i < n; i++) munmap((void *)v[i].region, sizeof(cgi_stats_region));
    free(v);
}

int cg_report_merge(const char *dir, const cg_proc_exit *exits, size_t nexits, const char *path,
                    cg_report_format format)
{
    cgi_proc_view *v;
    size_t n;
    int rc = cgi_stats_map_dir(dir, exits, nexits, &v, &n);
    if (rc != CG_OK) return rc;
    /* A process the CLI reaped that left no file: its storage was full,
     * read-only or removed (it counted in memory and said so). */
    size_t lost = 0;
    for (size_t k = 0; k < nexits; k++) {
        size_t i = 0;
        while (i < n && v[i].region->h.pid != exits[k].pid) i++;
        lost += i == n;
    }
    rc = cgi_report_to(path, v, n, lost, format);
    cgi_stats_unmap_dir(v, n);
    return rc;
}

/* ---- reading a saved report --------------------------------------------------
 * A small JSON reader for the report schema: objects, arrays, strings,
 * integers, true/false/null. Anything else, or anything missing, is an
 * error naming what was expected where. */

typedef struct cgi_json {
    const char *s, *end;
    int err;
    int depth; /* of cgi_skip's recursion: bounded, a hostile file cannot exhaust the stack */
    char msg[256];
} cgi_json;

/* Deeper than any report (4 levels): refused. */
#define CGI_JSON_MAX_DEPTH 32

static void cgi_json_fail(cgi_json *j, const char *what)
{
    if (j->err) return;
    j->err = 1;
    snprintf(j->msg, sizeof j->msg, "%s", what);
}

static void cgi_ws(cgi_json *j)
{
    while (j->s < j->end && (*j->s == ' ' || *j->s == '\n' || *j->s == '\t' || *j->s == '\r')) j->s++;
}

static int cgi_lit(cgi_json *j, char c)
{
    cgi_ws(j);
    if (j->s < j->end && *j->s == c) {
        j->s++;
        return 1;
    }
    return 0;
}

static int cgi_expect(cgi_json *j, char c)
{
    if (cgi_lit(j, c)) return 1;
    char m[64];
    snprintf(m, sizeof m, j->s >= j->end ? "ends early (expected '%c')" : "expected '%c'", c);
    cgi_json_fail(j, m);
    return 0;
}

static int cgi_str(cgi_json *j, char *out, size_t cap)
{
    if (!cgi_expect(j, '"')) return 0;
    size_t n = 0;
    while (j->s < j->end && *j->s != '"') {
        char c = *j->s++;
        if (c == '\\') {
            if (j->s >= j->end) break;
            c = *j->s++;
            if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c == 'u') {
                unsigned v = 0;
                for (int i = 0; i < 4; i++, j->s++) {
                    int h = j->s >= j->end ? -1
                            : *j->s >= '0' && *j->s <= '9' ? *j->s - '0'
                            : *j->s >= 'a' && *j->s <= 'f' ? *j->s - 'a' + 10
                            : *j->s >= 'A' && *j->s <= 'F' ? *j->s - 'A' + 10 : -1;
                    if (h < 0) {
                        cgi_json_fail(j, "expected four hex digits after \\u");
                        return 0;
                    }
                    v = v * 16 + (unsigned)h;
                }
                c = v < 0x80 ? (char)v : '?';
            }
        }
        /* No terminal control from a file reaches a table: an escape or
         * a newline in a name becomes '?'. */
        if ((unsigned char)c < 0x20 || c == 0x7f) c = '?';
        if (n + 1 < cap) out[n++] = c;
    }
    if (out && cap) out[n] = '\0';
    return cgi_expect(j, '"');
}

static int cgi_num(cgi_json *j, int64_t *out)
{
    cgi_ws(j);
    /* The text is not NUL-terminated: copy the number out before strtoll,
     * which would read on past the end of the buffer. */
    char buf[24];
    size_t n = 0;
    while (j->s + n < j->end && n < sizeof buf - 1 && (j->s[n] == '-' || (j->s[n] >= '0' && j->s[n] <= '9'))) n++;
    memcpy(buf, j->s, n);
    buf[n] = '\0';
    char *e;
    errno = 0;
    long long v = strtoll(buf, &e, 10);
    if (e == buf || errno || (size_t)(e - buf) != n) {
        cgi_json_fail(j, "expected a number");
        return 0;
    }
    j->s += n;
    *out = v;
    return 1;
}

static int cgi_word(cgi_json *j, const char *w)
{
    cgi_ws(j);
    size_t n = strlen(w);
    if ((size_t)(j->end - j->s) >= n && strncmp(j->s, w, n) == 0) {
        j->s += n;
        return 1;
    }
    return 0;
}

static void cgi_skip_value(cgi_json *j);

/* Skips any value (for keys this reader does not need). */
static void cgi_skip(cgi_json *j)
{
    cgi_ws(j);
    if (j->s >= j->end) return cgi_json_fail(j, "ends early");
    if (j->depth >= CGI_JSON_MAX_DEPTH) return cgi_json_fail(j, "nested too deeply");
    j->depth++;
    cgi_skip_value(j);
    j->depth--;
}

static void cgi_skip_value(cgi_json *j)
{
    if (*j->s == '"') {
        cgi_str(j, NULL, 0);
    } else if (cgi_lit(j, '{')) {
        if (cgi_lit(j, '}')) return;
        do {
            cgi_str(j, NULL, 0);
            cgi_expect(j, ':');
            cgi_skip(j);
        } while (!j->err && cgi_lit(j, ','));
        cgi_expect(j, '}');
    } else if (cgi_lit(j, '[')) {
        if (cgi_lit(j, ']')) return;
        do cgi_skip(j);
        while (!j->err && cgi_lit(j, ','));
        cgi_expect(j, ']');
    } else if (!cgi_word(j, "true") && !cgi_word(j, "false") && !cgi_word(j, "null")) {
        int64_t v;
        cgi_num(j, &v);
    }
}

static uint64_t cgi_u(int64_t v) { return v < 0 ? 0 : (uint64_t)v; }

static void cgi_read_site(cgi_json *j, cgi_stats_region *r)
{
    uint32_t n = atomic_load(&r->h.nrecords);
    if (n >= CGI_STATS_MAX_RECORDS) return cgi_json_fail(j, "too many sites");
    cgi_stats_record *rec = &r->r[n];
    int have_name = 0, have_calls = 0;
    if (!cgi_expect(j, '{')) return;
    do {
        char key[32];
        int64_t v = 0;
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        if (strcmp(key, "api") == 0) cgi_str(j, rec->api, sizeof rec->api);
        else if (strcmp(key, "name") == 0) have_name = cgi_str(j, rec->name, sizeof rec->name);
        else if (strcmp(key, "policy") == 0) {
            if (!cgi_expect(j, '{')) return;
            do {
                char pk[32], pv[CGI_DOMAIN_NAME_MAX];
                if (!cgi_str(j, pk, sizeof pk) || !cgi_expect(j, ':')) return;
                if (strcmp(pk, "blocking") == 0) rec->blocking = cgi_word(j, "true") ? 1 : (cgi_word(j, "false"), 0);
                else if (strcmp(pk, "serialize") == 0) {
                    if (!cgi_word(j, "null")) cgi_str(j, rec->domain, sizeof rec->domain);
                } else if (strcmp(pk, "transition") == 0 || strcmp(pk, "scope") == 0) {
                    cgi_str(j, pv, sizeof pv);
                    int val = pk[0] == 's' ? cgi_scope_value(pv) : cgi_transition_value(pv);
                    if (val < 0) val = 0; /* a name this callguard does not know: the default */
                    if (pk[0] == 's') rec->scope = (uint8_t)val;
                    else rec->transition = (uint8_t)val;
                } else cgi_skip(j);
            } while (!j->err && cgi_lit(j, ','));
            cgi_expect(j, '}');
        } else {
            _Atomic uint64_t *f = NULL;
            if (strcmp(key, "calls") == 0) f = &rec->c.calls, have_calls = 1;
            else if (strcmp(key, "nested") == 0) f = &rec->c.nested;
            else if (strcmp(key, "errors") == 0) f = &rec->c.errors;
            else if (strcmp(key, "total_ns") == 0) f = &rec->c.total_ns;
            else if (strcmp(key, "max_ns") == 0) f = &rec->c.max_ns;
            else if (strcmp(key, "lock_wait_ns") == 0) f = &rec->c.lock_wait_ns;
            else if (strcmp(key, "stalls") == 0) f = &rec->c.stalls;
            else if (strcmp(key, "stall_ns") == 0) f = &rec->c.stall_ns;
            if (f) {
                if (cgi_num(j, &v)) atomic_store(f, cgi_u(v));
            } else cgi_skip(j);
        }
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    if (!j->err && (!have_name || !have_calls)) return cgi_json_fail(j, "a site without \"name\" or \"calls\"");
    rec->used = 1;
    atomic_store(&r->h.nrecords, n + 1);
}

/* The Python place of a stall: {"file": ..., "line": ..., "function": ...} or null. */
static void cgi_read_python(cgi_json *j, cgi_stall *st)
{
    if (cgi_word(j, "null") || !cgi_expect(j, '{')) return;
    do {
        char pk[16];
        int64_t v = 0;
        if (!cgi_str(j, pk, sizeof pk) || !cgi_expect(j, ':')) return;
        if (strcmp(pk, "file") == 0) cgi_str(j, st->py_file, sizeof st->py_file);
        else if (strcmp(pk, "function") == 0) cgi_str(j, st->py_func, sizeof st->py_func);
        else if (strcmp(pk, "line") == 0) {
            if (cgi_num(j, &v)) st->py_line = (int32_t)v;
        } else cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
}

/* One stall of a saved report, into the next free entry of the list. */
static void cgi_read_stall(cgi_json *j, cgi_stats_region *r, unsigned *n)
{
    cgi_stall tmp, *st = *n < CGI_STATS_MAX_STALLS ? &r->stall[*n] : &tmp;
    memset(st, 0, sizeof *st);
    if (!cgi_expect(j, '{')) return;
    do {
        char key[32];
        int64_t v = 0;
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        uint64_t *u = NULL;
        if (strcmp(key, "api") == 0) cgi_str(j, st->api, sizeof st->api);
        else if (strcmp(key, "name") == 0) cgi_str(j, st->name, sizeof st->name);
        else if (strcmp(key, "thread") == 0) cgi_str(j, st->thread, sizeof st->thread);
        else if (strcmp(key, "runtime") == 0) cgi_str(j, st->runtime, sizeof st->runtime);
        else if (strcmp(key, "python") == 0) cgi_read_python(j, st);
        else if (strcmp(key, "tid") == 0) {
            if (cgi_num(j, &v)) st->tid = (int32_t)v;
        } else if ((u = strcmp(key, "ns") == 0             ? &st->ns
                        : strcmp(key, "call_ns") == 0      ? &st->call_ns
                        : strcmp(key, "lock_wait_ns") == 0 ? &st->wait_ns
                        : strcmp(key, "entered_ns") == 0   ? &st->at_ns
                                                           : NULL)) {
            if (cgi_num(j, &v)) *u = cgi_u(v);
        } else cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    if (!j->err && *n < CGI_STATS_MAX_STALLS) atomic_store(&st->valid, 1), (*n)++;
}

/* One quirk applied, of a saved report: {"name", "api", "serialize": [...],
 * "domain", "source", "why", "matched": {"vendor", "driver", "version",
 * "library"}}. */
static void cgi_read_quirk(cgi_json *j, cgi_stats_region *r, unsigned *n)
{
    cgi_quirk_rec tmp, *q = *n < CGI_STATS_MAX_QUIRKS ? &r->quirk[*n] : &tmp;
    memset(q, 0, sizeof *q);
    if (!cgi_expect(j, '{')) return;
    do {
        char key[32];
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        if (strcmp(key, "name") == 0) cgi_str(j, q->name, sizeof q->name);
        else if (strcmp(key, "api") == 0) cgi_str(j, q->api, sizeof q->api);
        else if (strcmp(key, "domain") == 0) cgi_str(j, q->domain, sizeof q->domain);
        else if (strcmp(key, "source") == 0) cgi_str(j, q->source, sizeof q->source);
        else if (strcmp(key, "why") == 0) cgi_str(j, q->why, sizeof q->why);
        else if (strcmp(key, "serialize") == 0) {
            if (!cgi_expect(j, '[')) return;
            if (!cgi_lit(j, ']')) {
                do {
                    char site[CGI_NAME_MAX];
                    size_t len = strlen(q->sites);
                    if (cgi_str(j, site, sizeof site) && len + strlen(site) + 3 < sizeof q->sites)
                        snprintf(q->sites + len, sizeof q->sites - len, "%s%s", len ? ", " : "", site);
                } while (!j->err && cgi_lit(j, ','));
                cgi_expect(j, ']');
            }
        } else if (strcmp(key, "matched") == 0) {
            if (!cgi_expect(j, '{')) return;
            do {
                char mk[16], vendor[16];
                if (!cgi_str(j, mk, sizeof mk) || !cgi_expect(j, ':')) return;
                if (strcmp(mk, "vendor") == 0) {
                    if (cgi_str(j, vendor, sizeof vendor)) q->vendor = (uint32_t)strtoul(vendor, NULL, 0);
                } else if (strcmp(mk, "driver") == 0) cgi_str(j, q->driver, sizeof q->driver);
                else if (strcmp(mk, "version") == 0) cgi_str(j, q->version, sizeof q->version);
                else if (strcmp(mk, "library") == 0) cgi_str(j, q->library, sizeof q->library);
                else cgi_skip(j);
            } while (!j->err && cgi_lit(j, ','));
            cgi_expect(j, '}');
        } else cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    if (!j->err && *n < CGI_STATS_MAX_QUIRKS) atomic_store(&q->valid, 1), (*n)++;
}

/* A call in flight of a saved report; its site is found once all sites are read. */
typedef struct cgi_read_flight {
    char api[CGI_API_NAME_MAX], name[CGI_NAME_MAX];
} cgi_read_flight;

static void cgi_read_in_flight(cgi_json *j, cgi_stats_region *r, cgi_read_flight *names, unsigned *n)
{
    cgi_slot tmp, *slot = *n < CGI_STATS_MAX_SLOTS ? &r->slot[*n] : &tmp;
    cgi_read_flight tmpn, *fn = *n < CGI_STATS_MAX_SLOTS ? &names[*n] : &tmpn;
    memset(slot, 0, sizeof *slot);
    memset(fn, 0, sizeof *fn);
    char state[24] = "";
    if (!cgi_expect(j, '{')) return;
    do {
        char key[32];
        int64_t v = 0;
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        if (strcmp(key, "api") == 0) cgi_str(j, fn->api, sizeof fn->api);
        else if (strcmp(key, "name") == 0) cgi_str(j, fn->name, sizeof fn->name);
        else if (strcmp(key, "thread") == 0) cgi_str(j, slot->thread, sizeof slot->thread);
        else if (strcmp(key, "state") == 0) cgi_str(j, state, sizeof state);
        else if (strcmp(key, "tid") == 0) {
            if (cgi_num(j, &v)) atomic_store(&slot->tid, (int32_t)v);
        } else if (strcmp(key, "entered_ns") == 0) {
            if (cgi_num(j, &v)) atomic_store(&slot->entered, cgi_u(v));
        } else cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    atomic_store(&slot->waiting, strcmp(state, "waiting_for_lock") == 0);
    if (atomic_load(&slot->tid) <= 0) atomic_store(&slot->tid, 1); /* a slot in use has a thread */
    if (!j->err && *n < CGI_STATS_MAX_SLOTS) (*n)++;
}

/* Points each call in flight at the record of its site (one is made for a
 * site the report does not list). */
static void cgi_link_in_flight(cgi_stats_region *r, const cgi_read_flight *names, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint32_t nrec = atomic_load(&r->h.nrecords), k = 0;
        while (k < nrec && !(strcmp(r->r[k].api, names[i].api) == 0 && strcmp(r->r[k].name, names[i].name) == 0)) k++;
        if (k == nrec && nrec < CGI_STATS_MAX_RECORDS) {
            snprintf(r->r[k].api, sizeof r->r[k].api, "%s", names[i].api);
            snprintf(r->r[k].name, sizeof r->r[k].name, "%s", names[i].name);
            atomic_store(&r->h.nrecords, nrec + 1);
        }
        if (k < CGI_STATS_MAX_RECORDS) atomic_store(&r->slot[i].counters, &r->r[k].c);
    }
}

static void cgi_read_process_into(cgi_json *j, cgi_proc_view *v, cgi_stats_region *r, cgi_read_flight *flight)
{
    int have_pid = 0, have_sites = 0;
    unsigned nstalls = 0, nflight = 0, nquirks = 0;
    if (!cgi_expect(j, '{')) return;
    do {
        char key[32];
        int64_t num;
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        if (strcmp(key, "pid") == 0 && cgi_num(j, &num)) r->h.pid = (int32_t)num, have_pid = 1;
        else if (strcmp(key, "ppid") == 0 && cgi_num(j, &num)) r->h.ppid = (int32_t)num;
        else if (strcmp(key, "command") == 0) cgi_str(j, r->h.command, sizeof r->h.command);
        else if (strcmp(key, "host") == 0) cgi_str(j, r->h.host, sizeof r->h.host);
        else if (strcmp(key, "exit") == 0) {
            if (!cgi_expect(j, '{')) return;
            do {
                char ek[16], ev[16];
                if (!cgi_str(j, ek, sizeof ek) || !cgi_expect(j, ':')) return;
                if (strcmp(ek, "state") == 0) {
                    cgi_str(j, ev, sizeof ev);
                    v->exit_state = strcmp(ev, "exited") == 0     ? CGI_PROC_EXITED
                                    : strcmp(ev, "signaled") == 0 ? CGI_PROC_SIGNALED
                                    : strcmp(ev, "execed") == 0   ? CGI_PROC_EXECED
                                                                  : CGI_PROC_RUNNING;
                } else if ((strcmp(ek, "status") == 0 || strcmp(ek, "signal") == 0) && cgi_num(j, &num)) {
                    v->exit_status = (int)num;
                } else cgi_skip(j);
            } while (!j->err && cgi_lit(j, ','));
            cgi_expect(j, '}');
        } else if (strcmp(key, "trace") == 0) {
            if (!cgi_expect(j, '{')) return;
            v->have_trace = 1;
            do {
                char tk[16];
                if (!cgi_str(j, tk, sizeof tk) || !cgi_expect(j, ':')) return;
                if (strcmp(tk, "events") == 0 && cgi_num(j, &num)) v->trace_events = cgi_u(num);
                else if (strcmp(tk, "dropped") == 0 && cgi_num(j, &num)) v->trace_dropped = cgi_u(num);
                else if (strcmp(tk, "events") != 0 && strcmp(tk, "dropped") != 0) cgi_skip(j);
            } while (!j->err && cgi_lit(j, ','));
            cgi_expect(j, '}');
        } else if (strcmp(key, "sites") == 0) {
            have_sites = 1;
            if (!cgi_expect(j, '[')) return;
            if (!cgi_lit(j, ']')) {
                do cgi_read_site(j, r);
                while (!j->err && cgi_lit(j, ','));
                cgi_expect(j, ']');
            }
        } else if (strcmp(key, "stalls") == 0 || strcmp(key, "in_flight") == 0) {
            int stalls = key[0] == 's';
            if (!cgi_expect(j, '[')) break;
            if (!cgi_lit(j, ']')) {
                do {
                    if (stalls) cgi_read_stall(j, r, &nstalls);
                    else cgi_read_in_flight(j, r, flight, &nflight);
                } while (!j->err && cgi_lit(j, ','));
                cgi_expect(j, ']');
            }
        } else if (strcmp(key, "quirks") == 0) {
            if (!cgi_expect(j, '[')) break;
            if (!cgi_lit(j, ']')) {
                do cgi_read_quirk(j, r, &nquirks);
                while (!j->err && cgi_lit(j, ','));
                cgi_expect(j, ']');
            }
        } else if (strcmp(key, "stalls_dropped") == 0) {
            if (cgi_num(j, &num)) atomic_store(&r->h.stalls_dropped, cgi_u(num));
        } else if (strcmp(key, "in_flight_unknown_threads") == 0) {
            if (cgi_num(j, &num)) atomic_store(&r->h.threads_unslotted, (uint32_t)cgi_u(num));
        } else cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    if (!j->err) cgi_link_in_flight(r, flight, nflight);
    if (!j->err && (!have_pid || !have_sites)) cgi_json_fail(j, "a process without \"pid\" or \"sites\"");
}

static void cgi_read_process(cgi_json *j, cgi_proc_view *v)
{
    cgi_stats_region *r = calloc(1, sizeof *r);
    cgi_read_flight *flight = calloc(CGI_STATS_MAX_SLOTS, sizeof *flight);
    if (r && flight) {
        v->region = r;
        v->have_exit = 1;
        atomic_store(&r->h.tick_mult, 1ull << 32); /* entered_ns is in ns already */
        r->h.base = (uint64_t)(uintptr_t)r;
        cgi_read_process_into(j, v, r, flight);
    } else {
        free(r);
        cgi_json_fail(j, "out of memory");
    }
    free(flight);
}

/* The largest saved report read (a report is about 1 KB a process). */
#define CGI_REPORT_MAX_FILE (256 << 20)

/* Reads one saved report, appending its processes to *pv (n of cap). */
static int cgi_report_read(const char *json_path, cgi_proc_view **pv, size_t *pn, size_t *pcap)
{
    if (!json_path) return cgi_fail(CG_EINVAL, "report file name is NULL");
    /* O_NONBLOCK: a FIFO opens without waiting for a writer, and is then refused. */
    int fd = open(json_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return cgi_fail(CG_EIO, "cannot read %s: %s", json_path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return cgi_fail(CG_EIO, "cannot read %s: %s, expected a report file", json_path,
                        S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                        : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "not a regular file");
    }
    if (st.st_size > CGI_REPORT_MAX_FILE) {
        close(fd);
        return cgi_fail(CG_EFORMAT, "%s: %lld bytes, more than a report of %d MiB this callguard reads", json_path,
                        (long long)st.st_size, CGI_REPORT_MAX_FILE >> 20);
    }
    if (st.st_size == 0) {
        close(fd);
        return cgi_fail(CG_EFORMAT, "%s is empty: not a callguard report", json_path);
    }
    char *text = malloc((size_t)st.st_size);
    ssize_t got = 0;
    while (text && got < st.st_size) { /* read() may return less than asked */
        ssize_t r = read(fd, text + got, (size_t)(st.st_size - got));
        if (r <= 0) break;
        got += r;
    }
    close(fd);
    if (got != st.st_size) {
        free(text);
        return cgi_fail(CG_EIO, "cannot read %s", json_path);
    }
    cgi_json j = {.s = text, .end = text + got};
    size_t n = *pn, cap = *pcap;
    cgi_proc_view *v = *pv;
    char schema[64] = "";
    int64_t version = -1;
    int have_processes = 0;
    if (!j.err && !cgi_lit(&j, '{')) cgi_json_fail(&j, "does not start with '{'");
    while (!j.err) {
        char key[32];
        if (!cgi_str(&j, key, sizeof key) || !cgi_expect(&j, ':')) break;
        if (strcmp(key, "schema") == 0) cgi_str(&j, schema, sizeof schema);
        else if (strcmp(key, "version") == 0) cgi_num(&j, &version);
        else if (strcmp(key, "processes") == 0) {
            have_processes = 1;
            if (strcmp(schema, "callguard-report") != 0 || version != 1) break; /* checked below */
            if (!cgi_expect(&j, '[')) break;
            if (!cgi_lit(&j, ']')) {
                do {
                    if (n == cap) {
                        cgi_proc_view *nv = realloc(v, 2 * cap * sizeof *v);
                        if (!nv) {
                            cgi_json_fail(&j, "out of memory");
                            break;
                        }
                        v = nv, cap *= 2;
                    }
                    memset(&v[n], 0, sizeof v[n]);
                    cgi_read_process(&j, &v[n++]);
                } while (!j.err && cgi_lit(&j, ','));
                cgi_expect(&j, ']');
            }
        } else cgi_skip(&j);
        if (!cgi_lit(&j, ',')) {
            cgi_expect(&j, '}');
            break;
        }
    }
    int rc = CG_OK;
    if (strcmp(schema, "callguard-report") != 0 && (!j.err || !schema[0]))
        rc = cgi_fail(CG_EFORMAT, "%s is not a callguard report (no \"schema\": \"callguard-report\")", json_path);
    else if (version != 1 && !j.err)
        rc = cgi_fail(CG_EFORMAT, "%s is a callguard report of version %lld; this callguard reads version 1",
                     json_path, (long long)version);
    else if (j.err)
        rc = cgi_fail(CG_EFORMAT, "%s: malformed or truncated report at byte %ld: %s", json_path,
                     (long)(j.s - text), j.msg);
    else if (!have_processes)
        rc = cgi_fail(CG_EFORMAT, "%s: report without \"processes\"", json_path);
    *pv = v, *pn = n, *pcap = cap;
    free(text);
    return rc;
}

int cg_report_merge_files(const char *const *json_paths, size_t npaths, const char *path, cg_report_format format)
{
    if (!json_paths || !npaths) return cgi_fail(CG_EINVAL, "no report file given");
    size_t n = 0, cap = 8;
    cgi_proc_view *v = calloc(cap, sizeof *v);
    if (!v) return cgi_fail(CG_ENOMEM, "out of memory");
    int rc = CG_OK;
    for (size_t i = 0; i < npaths && rc == CG_OK; i++) rc = cgi_report_read(json_paths[i], &v, &n, &cap);
    if (rc == CG_OK) rc = cgi_report_to(path, v, n, 0, format);
    for (size_t i = 0; i < n; i++) free((void *)v[i].region);
    free(v);
    return rc;
}

int cg_report_convert(const char *json_path, const char *path, cg_report_format format)
{
    return cg_report_merge_files(&json_path, 1, path, format);
}
