/* Reports of whole process trees, and saved reports read back.
 *
 * `callguard run` leaves one statistics file per process in a directory;
 * cg_report_merge maps them all and writes one report. A saved JSON report
 * is read back by turning it into the same in-memory regions, so a table
 * printed from a saved file is the table the run printed. */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int cg_by_start(const void *a, const void *b)
{
    const cg_proc_view *x = a, *y = b;
    if (x->region->h.start_unix_ns != y->region->h.start_unix_ns)
        return x->region->h.start_unix_ns < y->region->h.start_unix_ns ? -1 : 1;
    return x->region->h.pid - y->region->h.pid;
}

int cg_report_merge(const char *dir, const cg_proc_exit *exits, size_t nexits, const char *path,
                    cg_report_format format)
{
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) return cg_fail(CG_EIO, "cannot read statistics directory %s: %s", dir ? dir : "(null)", strerror(errno));
    size_t n = 0, cap = 16;
    cg_proc_view *v = calloc(cap, sizeof *v);
    struct dirent *e;
    while (v && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".stats") != 0) continue;
        char file[4096];
        snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(cg_stats_region)) {
            if (fd >= 0) close(fd);
            continue;
        }
        void *p = mmap(NULL, sizeof(cg_stats_region), PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) continue;
        const cg_stats_region *r = p;
        if (memcmp(r->h.magic, CG_STATS_MAGIC, sizeof CG_STATS_MAGIC) != 0 || r->h.version != CG_STATS_VERSION) {
            munmap(p, sizeof(cg_stats_region));
            continue;
        }
        if (n == cap) {
            cg_proc_view *nv = realloc(v, 2 * cap * sizeof *v);
            if (!nv) break;
            v = nv, cap *= 2;
        }
        v[n++] = (cg_proc_view){.region = r};
    }
    closedir(d);
    if (!v) return cg_fail(CG_ENOMEM, "out of memory");
    qsort(v, n, sizeof *v, cg_by_start);

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
            v[i].exit_state = CG_PROC_EXECED;
            continue;
        }
        for (size_t k = 0; k < nexits; k++)
            if (exits[k].pid == pid) {
                v[i].have_exit = 1;
                v[i].exit_state = exits[k].signaled ? CG_PROC_SIGNALED : CG_PROC_EXITED;
                v[i].exit_status = exits[k].status;
            }
    }

    int rc = cg_report_to(path, v, n, format);
    for (size_t i = 0; i < n; i++) munmap((void *)v[i].region, sizeof(cg_stats_region));
    free(v);
    return rc;
}

/* ---- reading a saved report --------------------------------------------------
 * A small JSON reader for the report schema: objects, arrays, strings,
 * integers, true/false/null. Anything else, or anything missing, is an
 * error naming what was expected where. */

typedef struct cg_json {
    const char *s, *end;
    int err;
    char msg[256];
} cg_json;

static void cg_json_fail(cg_json *j, const char *what)
{
    if (j->err) return;
    j->err = 1;
    snprintf(j->msg, sizeof j->msg, "%s", what);
}

static void cg_ws(cg_json *j)
{
    while (j->s < j->end && (*j->s == ' ' || *j->s == '\n' || *j->s == '\t' || *j->s == '\r')) j->s++;
}

static int cg_lit(cg_json *j, char c)
{
    cg_ws(j);
    if (j->s < j->end && *j->s == c) {
        j->s++;
        return 1;
    }
    return 0;
}

static int cg_expect(cg_json *j, char c)
{
    if (cg_lit(j, c)) return 1;
    char m[64];
    snprintf(m, sizeof m, j->s >= j->end ? "ends early (expected '%c')" : "expected '%c'", c);
    cg_json_fail(j, m);
    return 0;
}

static int cg_str(cg_json *j, char *out, size_t cap)
{
    if (!cg_expect(j, '"')) return 0;
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
                for (int i = 0; i < 4 && j->s < j->end; i++, j->s++)
                    v = v * 16 + (unsigned)(*j->s >= 'a' ? *j->s - 'a' + 10 : *j->s >= 'A' ? *j->s - 'A' + 10 : *j->s - '0');
                c = v < 0x80 ? (char)v : '?';
            }
        }
        if (n + 1 < cap) out[n++] = c;
    }
    if (out && cap) out[n] = '\0';
    return cg_expect(j, '"');
}

static int cg_num(cg_json *j, int64_t *out)
{
    cg_ws(j);
    char *e;
    errno = 0;
    long long v = strtoll(j->s, &e, 10);
    if (e == j->s || errno || e > j->end) {
        cg_json_fail(j, "expected a number");
        return 0;
    }
    j->s = e;
    *out = v;
    return 1;
}

static int cg_word(cg_json *j, const char *w)
{
    cg_ws(j);
    size_t n = strlen(w);
    if ((size_t)(j->end - j->s) >= n && strncmp(j->s, w, n) == 0) {
        j->s += n;
        return 1;
    }
    return 0;
}

/* Skips any value (for keys this reader does not need). */
static void cg_skip(cg_json *j)
{
    cg_ws(j);
    if (j->s >= j->end) return cg_json_fail(j, "ends early");
    if (*j->s == '"') {
        cg_str(j, NULL, 0);
    } else if (cg_lit(j, '{')) {
        if (cg_lit(j, '}')) return;
        do {
            cg_str(j, NULL, 0);
            cg_expect(j, ':');
            cg_skip(j);
        } while (!j->err && cg_lit(j, ','));
        cg_expect(j, '}');
    } else if (cg_lit(j, '[')) {
        if (cg_lit(j, ']')) return;
        do cg_skip(j);
        while (!j->err && cg_lit(j, ','));
        cg_expect(j, ']');
    } else if (!cg_word(j, "true") && !cg_word(j, "false") && !cg_word(j, "null")) {
        int64_t v;
        cg_num(j, &v);
    }
}

static uint64_t cg_u(int64_t v) { return v < 0 ? 0 : (uint64_t)v; }

static void cg_read_site(cg_json *j, cg_stats_region *r)
{
    uint32_t n = atomic_load(&r->h.nrecords);
    if (n >= CG_STATS_MAX_RECORDS) return cg_json_fail(j, "too many sites");
    cg_stats_record *rec = &r->r[n];
    int have_name = 0, have_calls = 0;
    if (!cg_expect(j, '{')) return;
    do {
        char key[32];
        int64_t v = 0;
        if (!cg_str(j, key, sizeof key) || !cg_expect(j, ':')) return;
        if (strcmp(key, "api") == 0) cg_str(j, rec->api, sizeof rec->api);
        else if (strcmp(key, "name") == 0) have_name = cg_str(j, rec->name, sizeof rec->name);
        else if (strcmp(key, "policy") == 0) {
            if (!cg_expect(j, '{')) return;
            do {
                char pk[32], pv[CG_DOMAIN_NAME_MAX];
                if (!cg_str(j, pk, sizeof pk) || !cg_expect(j, ':')) return;
                if (strcmp(pk, "blocking") == 0) rec->blocking = cg_word(j, "true") ? 1 : (cg_word(j, "false"), 0);
                else if (strcmp(pk, "serialize") == 0) {
                    if (!cg_word(j, "null")) cg_str(j, rec->domain, sizeof rec->domain);
                } else if (strcmp(pk, "transition") == 0 || strcmp(pk, "scope") == 0) {
                    cg_str(j, pv, sizeof pv);
                    if (pk[0] == 's') rec->scope = strcmp(pv, "handle") == 0;
                    else rec->transition = strcmp(pv, "blocking") == 0 ? 1 : strcmp(pv, "never") == 0 ? 2 : 0;
                } else cg_skip(j);
            } while (!j->err && cg_lit(j, ','));
            cg_expect(j, '}');
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
                if (cg_num(j, &v)) atomic_store(f, cg_u(v));
            } else cg_skip(j);
        }
    } while (!j->err && cg_lit(j, ','));
    cg_expect(j, '}');
    if (!j->err && (!have_name || !have_calls)) return cg_json_fail(j, "a site without \"name\" or \"calls\"");
    rec->used = 1;
    atomic_store(&r->h.nrecords, n + 1);
}

static void cg_read_process(cg_json *j, cg_proc_view *v)
{
    cg_stats_region *r = calloc(1, sizeof *r);
    if (!r) return cg_json_fail(j, "out of memory");
    v->region = r;
    v->have_exit = 1;
    int have_pid = 0, have_sites = 0;
    if (!cg_expect(j, '{')) return;
    do {
        char key[32];
        int64_t num;
        if (!cg_str(j, key, sizeof key) || !cg_expect(j, ':')) return;
        if (strcmp(key, "pid") == 0 && cg_num(j, &num)) r->h.pid = (int32_t)num, have_pid = 1;
        else if (strcmp(key, "ppid") == 0 && cg_num(j, &num)) r->h.ppid = (int32_t)num;
        else if (strcmp(key, "command") == 0) cg_str(j, r->h.command, sizeof r->h.command);
        else if (strcmp(key, "exit") == 0) {
            if (!cg_expect(j, '{')) return;
            do {
                char ek[16], ev[16];
                if (!cg_str(j, ek, sizeof ek) || !cg_expect(j, ':')) return;
                if (strcmp(ek, "state") == 0) {
                    cg_str(j, ev, sizeof ev);
                    v->exit_state = strcmp(ev, "exited") == 0     ? CG_PROC_EXITED
                                    : strcmp(ev, "signaled") == 0 ? CG_PROC_SIGNALED
                                    : strcmp(ev, "execed") == 0   ? CG_PROC_EXECED
                                                                  : CG_PROC_RUNNING;
                } else if ((strcmp(ek, "status") == 0 || strcmp(ek, "signal") == 0) && cg_num(j, &num)) {
                    v->exit_status = (int)num;
                } else cg_skip(j);
            } while (!j->err && cg_lit(j, ','));
            cg_expect(j, '}');
        } else if (strcmp(key, "sites") == 0) {
            have_sites = 1;
            if (!cg_expect(j, '[')) return;
            if (!cg_lit(j, ']')) {
                do cg_read_site(j, r);
                while (!j->err && cg_lit(j, ','));
                cg_expect(j, ']');
            }
        } else cg_skip(j);
    } while (!j->err && cg_lit(j, ','));
    cg_expect(j, '}');
    if (!j->err && (!have_pid || !have_sites)) cg_json_fail(j, "a process without \"pid\" or \"sites\"");
}

int cg_report_convert(const char *json_path, const char *path, cg_report_format format)
{
    if (!json_path) return cg_fail(CG_EINVAL, "report file name is NULL");
    int fd = open(json_path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return cg_fail(CG_EIO, "cannot read %s: %s", json_path, strerror(e));
    }
    if (st.st_size == 0) {
        close(fd);
        return cg_fail(CG_EFORMAT, "%s is empty: not a callguard report", json_path);
    }
    char *text = malloc((size_t)st.st_size);
    ssize_t got = text ? read(fd, text, (size_t)st.st_size) : -1;
    close(fd);
    if (got != st.st_size) {
        free(text);
        return cg_fail(CG_EIO, "cannot read %s", json_path);
    }
    cg_json j = {.s = text, .end = text + got};
    size_t n = 0, cap = 8;
    cg_proc_view *v = calloc(cap, sizeof *v);
    char schema[64] = "";
    int64_t version = -1;
    int have_processes = 0;
    if (!v) cg_json_fail(&j, "out of memory");
    if (!j.err && !cg_lit(&j, '{')) cg_json_fail(&j, "does not start with '{'");
    while (!j.err) {
        char key[32];
        if (!cg_str(&j, key, sizeof key) || !cg_expect(&j, ':')) break;
        if (strcmp(key, "schema") == 0) cg_str(&j, schema, sizeof schema);
        else if (strcmp(key, "version") == 0) cg_num(&j, &version);
        else if (strcmp(key, "processes") == 0) {
            have_processes = 1;
            if (strcmp(schema, "callguard-report") != 0 || version != 1) break; /* checked below */
            if (!cg_expect(&j, '[')) break;
            if (!cg_lit(&j, ']')) {
                do {
                    if (n == cap) {
                        cg_proc_view *nv = realloc(v, 2 * cap * sizeof *v);
                        if (!nv) {
                            cg_json_fail(&j, "out of memory");
                            break;
                        }
                        v = nv, cap *= 2;
                    }
                    memset(&v[n], 0, sizeof v[n]);
                    cg_read_process(&j, &v[n++]);
                } while (!j.err && cg_lit(&j, ','));
                cg_expect(&j, ']');
            }
        } else cg_skip(&j);
        if (!cg_lit(&j, ',')) {
            cg_expect(&j, '}');
            break;
        }
    }
    int rc = CG_OK;
    if (strcmp(schema, "callguard-report") != 0 && (!j.err || !schema[0]))
        rc = cg_fail(CG_EFORMAT, "%s is not a callguard report (no \"schema\": \"callguard-report\")", json_path);
    else if (version != 1 && !j.err)
        rc = cg_fail(CG_EFORMAT, "%s is a callguard report of version %lld; this callguard reads version 1",
                     json_path, (long long)version);
    else if (j.err)
        rc = cg_fail(CG_EFORMAT, "%s: malformed or truncated report at byte %ld: %s", json_path,
                     (long)(j.s - text), j.msg);
    else if (!have_processes)
        rc = cg_fail(CG_EFORMAT, "%s: report without \"processes\"", json_path);
    if (rc == CG_OK) rc = cg_report_to(path, v, n, format);
    for (size_t i = 0; i < n; i++) free((void *)v[i].region);
    free(v);
    free(text);
    return rc;
}
