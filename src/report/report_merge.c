/* Reports of whole process trees, and saved reports read back.
 *
 * `callguard run` leaves one statistics file per process in a directory;
 * cg_report_merge reads them one at a time into one buffer and writes one
 * report as it goes. A saved JSON report is read back by turning each of
 * its processes into the same in-memory region, so a table printed from a
 * saved file is the table the run printed. */
#define _GNU_SOURCE
#include "report.h"

#include "../runtime/errors.h"
#include "../runtime/names.h"
#include "outfile.h"
#include "../runtime/trace_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A string field of a statistics file, made one NUL-terminated line
 * without control characters (in the reader's copy; the file is untouched). */
static void cgi_fix_str(char *f, size_t cap)
{
    size_t n = strnlen(f, cap);
    if (n == cap) f[--n] = '\0';
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)f[i] < 0x20 || f[i] == 0x7f) f[i] = '?';
}

/* Every field the reports read, checked: the record count within the
 * file, strings terminated and printable, policy values in range. A field
 * added to the file gets its check here. */
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
        for (unsigned c = 0; c < CGI_STATS_MAX_CODES; c++) {
            cgi_code *k = &rec->code[c];
            uint32_t set = atomic_load(&k->set);
            if (set == CGI_CODE_ERROR || set == CGI_CODE_STATE)
                cgi_fix_str(k->name, sizeof k->name);
            else if (set != CGI_CODE_FREE)
                atomic_store(&k->set, CGI_CODE_FREE); /* died while naming it, or garbage */
        }
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
        cgi_fix_str(q->not_applied, sizeof q->not_applied);
        if (q->applied > 1) q->applied = 1;
    }
    for (unsigned i = 0; i < CGI_STATS_MAX_VIOLATIONS; i++) {
        cgi_violation *v = &r->violation[i];
        if (!atomic_load(&v->valid)) continue;
        if (v->kind != CGI_VIOLATION_SEQUENCE) v->kind = CGI_VIOLATION_OVERLAP;
        cgi_fix_str(v->api, sizeof v->api);
        cgi_fix_str(v->other_api, sizeof v->other_api);
        cgi_fix_str(v->name, sizeof v->name);
        cgi_fix_str(v->other, sizeof v->other);
        cgi_fix_str(v->set_name, sizeof v->set_name);
        cgi_fix_str(v->param, sizeof v->param);
        cgi_fix_str(v->other_param, sizeof v->other_param);
        cgi_fix_str(v->access, sizeof v->access);
        cgi_fix_str(v->other_access, sizeof v->other_access);
    }
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        cgi_slot *slot = &r->slot[i];
        if (atomic_load(&slot->tid) == 0) continue;
        for (size_t c = 0; c < sizeof slot->thread; c++)
            if (slot->thread[c] && ((unsigned char)slot->thread[c] < 0x20 || slot->thread[c] == 0x7f))
                slot->thread[c] = '?';
    }
}

/* ---- the statistics files of a run, one at a time ----------------------------
 * A run of any number of processes: the directory is listed by reading each
 * file's header (a few bytes kept per process), then each file is read whole
 * by pread into one buffer, checked, written into the report and forgotten.
 * Nothing is mapped: a file cut short under the reader is a short read, not
 * SIGBUS, and the number of files is not bounded by vm.max_map_count. */

static int cgi_by_start(const void *a, const void *b)
{
    const cgi_stats_entry *x = a, *y = b;
    if (x->start_unix_ns != y->start_unix_ns) return x->start_unix_ns < y->start_unix_ns ? -1 : 1;
    return (x->pid > y->pid) - (x->pid < y->pid);
}

static int cgi_by_pid(const void *a, const void *b)
{
    const cgi_stats_entry *x = *(const cgi_stats_entry *const *)a, *y = *(const cgi_stats_entry *const *)b;
    if (x->pid != y->pid) return (x->pid > y->pid) - (x->pid < y->pid);
    return cgi_by_start(x, y);
}

/* Exits by pid, and among one pid's by their place in the list: the last reaped wins. */
static int cgi_exit_by_pid(const void *a, const void *b)
{
    const cg_proc_exit *x = *(const cg_proc_exit *const *)a, *y = *(const cg_proc_exit *const *)b;
    if (x->pid != y->pid) return (x->pid > y->pid) - (x->pid < y->pid);
    return (x > y) - (x < y);
}

size_t cgi_pread_full(int fd, void *buf, size_t len, off_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t r = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

/* A file name from a directory the guarded program writes, fit for one
 * line of a message: control characters become '?'. */
static void cgi_safe_name(char *out, size_t cap, const char *name)
{
    if (out != name) snprintf(out, cap, "%s", name);
    for (char *c = out; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = '?';
}

int cgi_stats_read_fd(int fd, cgi_stats_region *r, char *why, size_t cap)
{
    struct stat st;
    if (fstat(fd, &st) != 0) return snprintf(why, cap, "cannot read it: %s", strerror(errno)), -1;
    if (!S_ISREG(st.st_mode)) return snprintf(why, cap, "not a regular file"), -1;
    size_t got = cgi_pread_full(fd, &r->h, sizeof r->h, 0);
    if (got < sizeof r->h)
        return snprintf(why, cap, "cut short: %zu bytes, a statistics file has %zu", got, sizeof *r), -1;
    if (memcmp(r->h.magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC) != 0)
        return snprintf(why, cap, "not a statistics file (no %s magic)", CGI_STATS_MAGIC), -1;
    if (r->h.version != CGI_STATS_VERSION)
        return snprintf(why, cap, "a statistics file of version %u; this callguard reads version %d", r->h.version,
                        CGI_STATS_VERSION),
               -1;
    /* Only the records in use, then the stalls and slots (and whatever
     * follows them): a few pages for most processes, not the whole file. */
    uint32_t n = atomic_load(&r->h.nrecords);
    if (n > CGI_STATS_MAX_RECORDS) n = CGI_STATS_MAX_RECORDS, atomic_store(&r->h.nrecords, n);
    const size_t rec_off = offsetof(cgi_stats_region, r), tail_off = offsetof(cgi_stats_region, stall);
    const size_t want = (size_t)n * sizeof r->r[0], tail = sizeof *r - tail_off;
    if (cgi_pread_full(fd, r->r, want, (off_t)rec_off) != want ||
        cgi_pread_full(fd, (char *)r + tail_off, tail, (off_t)tail_off) != tail) {
        off_t end = lseek(fd, 0, SEEK_END);
        return snprintf(why, cap, "cut short while read: %lld bytes, a statistics file has %zu", (long long)end,
                        sizeof *r),
               -1;
    }
    cgi_stats_sanitize(r);
    return 0;
}

/* Events kept and dropped of a trace file, from its header and thread table
 * (head: what was read of them; size: the file's): the counts go into the
 * report; the rings are read by the trace merge alone. */
static int cgi_trace_counts(const char *head, size_t got, size_t size, uint64_t *kept, uint64_t *dropped)
{
    const cgi_trace_header *h = (const cgi_trace_header *)head;
    if (got < sizeof *h + CGI_TRACE_TABLE_BYTES || memcmp(h->magic, CGI_TRACE_MAGIC, sizeof CGI_TRACE_MAGIC) != 0 ||
        h->version != CGI_TRACE_VERSION || h->events_per_thread != CGI_TRACE_EVENTS ||
        h->max_threads != CGI_TRACE_MAX_THREADS)
        return -1;
    const cgi_trace_thread *t = (const cgi_trace_thread *)(h + 1);
    *dropped = atomic_load(&h->lost), *kept = 0;
    uint32_t n = atomic_load(&h->nthreads);
    for (uint32_t i = 0; i < n && i < CGI_TRACE_MAX_THREADS; i++) {
        if (!atomic_load(&t[i].ready) || CGI_TRACE_RING_OFFSET(i) + CGI_TRACE_RING_BYTES > size) continue;
        uint64_t w = atomic_load(&t[i].written), k = w < CGI_TRACE_EVENTS ? w : CGI_TRACE_EVENTS - 1;
        *kept += k, *dropped += w - k;
    }
    return 0;
}

/* Each trace file's counts go to the process it pairs with (same pid and
 * start): a report says how many timeline events were dropped. */
static void cgi_note_traces(const char *dir, cgi_stats_entry *v, size_t n)
{
    DIR *d = opendir(dir);
    char *head = malloc(sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES);
    struct dirent *e;
    while (d && head && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".trace") != 0) continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            if (fd >= 0) close(fd);
            continue;
        }
        size_t got = cgi_pread_full(fd, head, sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES, 0);
        close(fd);
        uint64_t kept, dropped;
        if (cgi_trace_counts(head, got, (size_t)st.st_size, &kept, &dropped) != 0) continue;
        const cgi_trace_header *h = (const cgi_trace_header *)head;
        cgi_stats_entry *p = cgi_stats_find(v, n, h->pid, h->stats_start_unix_ns);
        if (p) {
            p->how.have_trace = 1;
            p->how.trace_events += kept;
            p->how.trace_dropped += dropped;
        }
    }
    free(head);
    if (d) closedir(d);
}

cgi_stats_entry *cgi_stats_find(cgi_stats_entry *v, size_t n, int32_t pid, uint64_t start_unix_ns)
{
    cgi_stats_entry key = {.pid = pid, .start_unix_ns = start_unix_ns};
    return n ? bsearch(&key, v, n, sizeof *v, cgi_by_start) : NULL;
}

/* How each process ended: what the CLI reaped is exact; an image that was
 * replaced by exec left a later file with the same pid, or the CLI saw it
 * replaced (stats_settle.c); a process that called exit() wrote its status
 * in its own header (read with the file). */
static int cgi_note_exits(cgi_stats_entry *v, size_t n, const cg_proc_exit *exits, size_t nexits)
{
    cgi_stats_entry **byp = malloc((n ? n : 1) * sizeof *byp);
    const cg_proc_exit **ex = malloc((nexits ? nexits : 1) * sizeof *ex);
    if (!byp || !ex) return free(byp), free(ex), -1;
    for (size_t i = 0; i < n; i++)
        byp[i] = &v[i];
    for (size_t k = 0; k < nexits; k++)
        ex[k] = &exits[k];
    qsort(byp, n, sizeof *byp, cgi_by_pid);
    qsort(ex, nexits, sizeof *ex, cgi_exit_by_pid);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        cgi_proc_view *how = &byp[i]->how;
        if ((i + 1 < n && byp[i + 1]->pid == byp[i]->pid) || how->exit_state == CGI_PROC_EXECED) {
            how->have_exit = 1;
            how->exit_state = CGI_PROC_EXECED;
            continue;
        }
        while (k < nexits && ex[k]->pid < byp[i]->pid)
            k++;
        while (k + 1 < nexits && ex[k + 1]->pid == byp[i]->pid)
            k++;
        if (k < nexits && ex[k]->pid == byp[i]->pid) {
            how->have_exit = 1;
            how->exit_state = ex[k]->signaled ? CGI_PROC_SIGNALED : CGI_PROC_EXITED;
            how->exit_status = ex[k]->status;
        }
    }
    free(byp), free(ex);
    return 0;
}

/* The processes that could not keep a file, as the CLI wrote them (stats.h):
 * a page with the count, or, where the disk took no byte, an empty file
 * whose size is the count. */
static size_t cgi_lost_count(int dfd)
{
    cgi_lost_page page;
    int fd = openat(dfd, CGI_STATS_LOST_FILE, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    struct stat st;
    int ok = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    size_t got = ok ? cgi_pread_full(fd, &page, sizeof page, 0) : 0;
    if (fd >= 0) close(fd);
    if (got == sizeof page && memcmp(page.magic, CGI_LOST_MAGIC, sizeof CGI_LOST_MAGIC) == 0)
        return (size_t)atomic_load(&page.count);
    return ok && st.st_blocks == 0 ? (size_t)st.st_size : 0;
}

int cgi_stats_list_dir(const char *dir, const cg_proc_exit *exits, size_t nexits, cgi_stats_entry **out, size_t *count,
                       size_t *cut)
{
    *out = NULL, *count = 0;
    if (cut) *cut = 0;
    DIR *d = dir ? opendir(dir) : NULL;
    /* Removed during the run: no process left a file; the report says how
     * many the CLI reaped. */
    if (!d && dir && errno == ENOENT) return CG_OK;
    if (!d) return cgi_fail(CG_EIO, "cannot read statistics directory %s: %s", dir ? dir : "(null)", strerror(errno));
    size_t n = 0, cap = 0;
    cgi_stats_entry *v = NULL;
    cgi_stats_header *h = malloc(sizeof *h);
    int oom = !h;
    struct dirent *e;
    while (!oom && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (cut && strcmp(e->d_name, CGI_STATS_LOST_FILE) == 0) *cut += cgi_lost_count(dirfd(d));
        if (len < 7 || strcmp(e->d_name + len - 6, ".stats") != 0) continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
        struct stat st;
        int ok =
            fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && cgi_pread_full(fd, h, sizeof *h, 0) == sizeof *h;
        if (fd >= 0) close(fd);
        /* A file whose process died before it wrote its header, or of
         * another version: not a process of this run that callguard can read. */
        if (!ok || memcmp(h->magic, CGI_STATS_MAGIC, sizeof CGI_STATS_MAGIC) != 0 || h->version != CGI_STATS_VERSION)
            continue;
        if ((size_t)st.st_size < sizeof(cgi_stats_region)) {
            /* Its process wrote a header, then the file was cut (the file
             * is allocated whole before anything is written). */
            if (!cut) continue; /* said by the report's listing, not again */
            char safe[4096];
            snprintf(safe, sizeof safe, "%s/%s", dir, e->d_name);
            cgi_safe_name(safe, sizeof safe, safe);
            cgi_say("%s: cut short: %lld bytes, a statistics file has %zu; process %d is left out "
                    "of the report",
                    safe, (long long)st.st_size, sizeof(cgi_stats_region), (int)h->pid);
            (*cut)++;
            continue;
        }
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            cgi_stats_entry *nv = realloc(v, ncap * sizeof *nv);
            if (!nv) {
                oom = 1;
                break;
            }
            v = nv, cap = ncap;
        }
        v[n] = (cgi_stats_entry){.name = strdup(e->d_name), .pid = h->pid, .start_unix_ns = h->start_unix_ns};
        if (atomic_load(&h->state) == CGI_PROC_EXECED) v[n].how.exit_state = CGI_PROC_EXECED;
        if (!v[n].name)
            oom = 1;
        else
            n++;
    }
    closedir(d);
    free(h);
    if (!oom) {
        if (n) qsort(v, n, sizeof *v, cgi_by_start); /* v is NULL when n is 0 */
        oom = cgi_note_exits(v, n, exits, nexits) != 0;
    }
    if (oom) {
        cgi_stats_list_free(v, n);
        return cgi_fail(CG_ENOMEM, "out of memory listing statistics directory %s", dir);
    }
    cgi_note_traces(dir, v, n);
    *out = v;
    *count = n;
    return CG_OK;
}

void cgi_stats_list_free(cgi_stats_entry *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i].name);
    free(v);
}

int cgi_stats_read_entry(const char *dir, const cgi_stats_entry *e, cgi_stats_region *r)
{
    char file[4096], why[160];
    snprintf(file, sizeof file, "%s/%s", dir, e->name);
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
    int rc = fd < 0 ? (snprintf(why, sizeof why, "cannot open it: %s", strerror(errno)), -1)
                    : cgi_stats_read_fd(fd, r, why, sizeof why);
    if (fd >= 0) close(fd);
    if (rc == 0 && (r->h.pid != e->pid || r->h.start_unix_ns != e->start_unix_ns))
        rc = -1, snprintf(why, sizeof why, "replaced while read (another process's header)");
    if (rc != 0) {
        char safe[4096];
        cgi_safe_name(safe, sizeof safe, file);
        cgi_say("%s: %s; process %d is left out of the report", safe, why, (int)e->pid);
    }
    return rc;
}

int cg_report_merge(const char *dir, const cg_proc_exit *exits, size_t nexits, const char *path,
                    cg_report_format format)
{
    cgi_stats_entry *v;
    size_t n, lost;
    /* lost: files cut short, and the processes whose storage was full,
     * read-only or removed (each counted in memory, said so, and counted by
     * the CLI: stats.h). A process without a file made no guarded call. */
    int rc = cgi_stats_list_dir(dir, exits, nexits, &v, &n, &lost);
    if (rc != CG_OK) return rc;
    cgi_stats_region *r = calloc(1, sizeof *r);
    cgi_report_writer *w = NULL;
    if (!r)
        rc = cgi_fail(CG_ENOMEM, "out of memory");
    else
        rc = cgi_report_begin(path, format, &w);
    if (rc == CG_OK) {
        for (size_t i = 0; i < n; i++) {
            /* A file that cannot be read now (cut short, replaced) is said
             * and counted; the others are reported. */
            if (cgi_stats_read_entry(dir, &v[i], r) != 0) {
                lost++;
                continue;
            }
            cgi_proc_view p = v[i].how;
            p.region = r;
            cgi_report_add(w, &p);
        }
        rc = cgi_report_end(w, lost);
    }
    free(r);
    cgi_stats_list_free(v, n);
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
    while (j->s < j->end && (*j->s == ' ' || *j->s == '\n' || *j->s == '\t' || *j->s == '\r'))
        j->s++;
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
            cgi_json_fail(j, "expected four hex digits after \\u");
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

static int cgi_str(cgi_json *j, char *out, size_t cap)
{
    if (!cgi_expect(j, '"')) return 0;
    size_t n = 0;
    while (j->s < j->end && *j->s != '"') {
        char c = *j->s++;
        if (c == '\\') {
            if (j->s >= j->end) break;
            c = *j->s++;
            if (c == 'n')
                c = '\n';
            else if (c == 't')
                c = '\t';
            else if (c == 'u') {
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
        }
        /* No terminal control from a file reaches a table: an escape or
         * a newline in a name becomes '?'. */
        if ((unsigned char)c < 0x20 || c == 0x7f) c = '?';
        if (n + 1 < cap) out[n++] = c;
    }
    if (out && cap) out[n] = '\0';
    return cgi_expect(j, '"');
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
    cgi_json_fail(j, m);
}

/* A whole number (callguard writes no fraction and no exponent). */
static int cgi_num(cgi_json *j, int64_t *out)
{
    cgi_ws(j);
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
static int cgi_count(cgi_json *j, const char *key, uint64_t *out)
{
    cgi_ws(j);
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
        do
            cgi_skip(j);
        while (!j->err && cgi_lit(j, ','));
        cgi_expect(j, ']');
    } else if (!cgi_word(j, "true") && !cgi_word(j, "false") && !cgi_word(j, "null")) {
        int64_t v;
        cgi_num(j, &v);
    }
}

/* One entry of a site's "results": {"name", "code", "calls", "kind"}. The
 * "other" entries (code null) are what errors and states leave unnamed:
 * nothing to keep. */
static void cgi_read_code(cgi_json *j, cgi_stats_record *rec, unsigned *n)
{
    char name[CGI_CODE_NAME_MAX] = "", kind[16] = "";
    int64_t code = 0;
    uint64_t calls = 0;
    int have_code = 0;
    if (!cgi_expect(j, '{')) return;
    do {
        char key[16];
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        if (strcmp(key, "name") == 0)
            cgi_str(j, name, sizeof name);
        else if (strcmp(key, "code") == 0) {
            if (!cgi_word(j, "null")) have_code = cgi_num(j, &code);
        } else if (strcmp(key, "calls") == 0)
            cgi_count(j, key, &calls);
        else if (strcmp(key, "kind") == 0)
            cgi_str(j, kind, sizeof kind);
        else
            cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    if (j->err || !have_code || *n >= CGI_STATS_MAX_CODES) return;
    cgi_code *k = &rec->code[(*n)++];
    k->code = (int32_t)code;
    memcpy(k->name, name, sizeof k->name);
    atomic_store(&k->count, calls);
    atomic_store(&k->set, strcmp(kind, "state") == 0 ? CGI_CODE_STATE : CGI_CODE_ERROR);
}

static void cgi_read_site(cgi_json *j, cgi_stats_region *r)
{
    uint32_t n = atomic_load(&r->h.nrecords);
    if (n >= CGI_STATS_MAX_RECORDS) return cgi_json_fail(j, "too many sites");
    cgi_stats_record *rec = &r->r[n];
    memset(rec, 0, sizeof *rec); /* the region is reused: the last process's record */
    int have_name = 0, have_calls = 0;
    if (!cgi_expect(j, '{')) return;
    do {
        char key[32];
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        if (strcmp(key, "api") == 0)
            cgi_str(j, rec->api, sizeof rec->api);
        else if (strcmp(key, "name") == 0)
            have_name = cgi_str(j, rec->name, sizeof rec->name);
        else if (strcmp(key, "results") == 0) {
            unsigned ncodes = 0;
            if (!cgi_expect(j, '[')) return;
            if (!cgi_lit(j, ']')) {
                do
                    cgi_read_code(j, rec, &ncodes);
                while (!j->err && cgi_lit(j, ','));
                cgi_expect(j, ']');
            }
        } else if (strcmp(key, "policy") == 0) {
            if (!cgi_expect(j, '{')) return;
            do {
                char pk[32], pv[CGI_DOMAIN_NAME_MAX];
                if (!cgi_str(j, pk, sizeof pk) || !cgi_expect(j, ':')) return;
                if (strcmp(pk, "blocking") == 0)
                    rec->blocking = cgi_word(j, "true") ? 1 : (cgi_word(j, "false"), 0);
                else if (strcmp(pk, "serialize") == 0) {
                    if (!cgi_word(j, "null")) cgi_str(j, rec->domain, sizeof rec->domain);
                } else if (strcmp(pk, "transition") == 0 || strcmp(pk, "scope") == 0) {
                    cgi_str(j, pv, sizeof pv);
                    int val = pk[0] == 's' ? cgi_scope_value(pv) : cgi_transition_value(pv);
                    if (val < 0) val = 0; /* a name this callguard does not know: the default */
                    if (pk[0] == 's')
                        rec->scope = (uint8_t)val;
                    else
                        rec->transition = (uint8_t)val;
                } else
                    cgi_skip(j);
            } while (!j->err && cgi_lit(j, ','));
            cgi_expect(j, '}');
        } else {
            _Atomic uint64_t *f = NULL;
            if (strcmp(key, "calls") == 0)
                f = &rec->c.calls, have_calls = 1;
            else if (strcmp(key, "nested") == 0)
                f = &rec->c.nested;
            else if (strcmp(key, "errors") == 0)
                f = &rec->c.errors;
            else if (strcmp(key, "total_ns") == 0)
                f = &rec->c.total_ns;
            else if (strcmp(key, "max_ns") == 0)
                f = &rec->c.max_ns;
            else if (strcmp(key, "lock_wait_ns") == 0)
                f = &rec->c.lock_wait_ns;
            else if (strcmp(key, "stalls") == 0)
                f = &rec->c.stalls;
            else if (strcmp(key, "stall_ns") == 0)
                f = &rec->c.stall_ns;
            else if (strcmp(key, "states") == 0)
                f = &rec->c.states;
            else if (strcmp(key, "peak_inside") == 0 || strcmp(key, "peak_waiting") == 0) {
                /* null: not measured (peak_kind is derived from it) */
                uint64_t u;
                cgi_peak *p = key[5] == 'i' ? &rec->c.inside : &rec->c.waiting;
                if (!cgi_word(j, "null") && cgi_count(j, key, &u))
                    atomic_store(&p->peak, u > UINT32_MAX ? UINT32_MAX : (uint32_t)u);
                continue;
            }
            if (f) {
                uint64_t u;
                if (cgi_count(j, key, &u)) atomic_store(f, u);
            } else
                cgi_skip(j);
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
        if (strcmp(pk, "file") == 0)
            cgi_str(j, st->py_file, sizeof st->py_file);
        else if (strcmp(pk, "function") == 0)
            cgi_str(j, st->py_func, sizeof st->py_func);
        else if (strcmp(pk, "line") == 0) {
            if (cgi_num(j, &v)) st->py_line = (int32_t)v;
        } else
            cgi_skip(j);
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
        if (strcmp(key, "api") == 0)
            cgi_str(j, st->api, sizeof st->api);
        else if (strcmp(key, "name") == 0)
            cgi_str(j, st->name, sizeof st->name);
        else if (strcmp(key, "thread") == 0)
            cgi_str(j, st->thread, sizeof st->thread);
        else if (strcmp(key, "runtime") == 0)
            cgi_str(j, st->runtime, sizeof st->runtime);
        else if (strcmp(key, "python") == 0)
            cgi_read_python(j, st);
        else if (strcmp(key, "tid") == 0) {
            if (cgi_num(j, &v)) st->tid = (int32_t)v;
        } else if ((u = strcmp(key, "ns") == 0             ? &st->ns
                        : strcmp(key, "call_ns") == 0      ? &st->call_ns
                        : strcmp(key, "lock_wait_ns") == 0 ? &st->wait_ns
                        : strcmp(key, "entered_ns") == 0   ? &st->at_ns
                                                           : NULL)) {
            cgi_count(j, key, u);
        } else
            cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    if (!j->err && *n < CGI_STATS_MAX_STALLS) atomic_store(&st->valid, 1), (*n)++;
}

/* One quirk matched, of a saved report: {"name", "api", "applied",
 * "not_applied" (when not applied), "serialize": [...], "domain", "source",
 * "why", "matched": {"vendor", "driver", "version", "library"}}. A report
 * without "applied" (before it was written) lists only applied ones. One
 * past the CGI_STATS_MAX_QUIRKS kept is counted as dropped. */
static void cgi_read_quirk(cgi_json *j, cgi_stats_region *r, unsigned *n)
{
    cgi_quirk_rec tmp, *q = *n < CGI_STATS_MAX_QUIRKS ? &r->quirk[*n] : &tmp;
    memset(q, 0, sizeof *q);
    q->applied = 1;
    if (!cgi_expect(j, '{')) return;
    do {
        char key[32];
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        if (strcmp(key, "name") == 0)
            cgi_str(j, q->name, sizeof q->name);
        else if (strcmp(key, "api") == 0)
            cgi_str(j, q->api, sizeof q->api);
        else if (strcmp(key, "domain") == 0)
            cgi_str(j, q->domain, sizeof q->domain);
        else if (strcmp(key, "source") == 0)
            cgi_str(j, q->source, sizeof q->source);
        else if (strcmp(key, "why") == 0)
            cgi_str(j, q->why, sizeof q->why);
        else if (strcmp(key, "not_applied") == 0)
            cgi_str(j, q->not_applied, sizeof q->not_applied);
        else if (strcmp(key, "applied") == 0)
            q->applied = cgi_word(j, "true") ? 1 : (cgi_word(j, "false"), 0);
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
                } else if (strcmp(mk, "driver") == 0)
                    cgi_str(j, q->driver, sizeof q->driver);
                else if (strcmp(mk, "version") == 0)
                    cgi_str(j, q->version, sizeof q->version);
                else if (strcmp(mk, "library") == 0)
                    cgi_str(j, q->library, sizeof q->library);
                else
                    cgi_skip(j);
            } while (!j->err && cgi_lit(j, ','));
            cgi_expect(j, '}');
        } else
            cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    if (j->err) return;
    if (*n < CGI_STATS_MAX_QUIRKS)
        atomic_store(&q->valid, 1), (*n)++;
    else
        atomic_fetch_add(&r->h.quirks_dropped, 1);
}

/* One thread-rule violation of a saved report, into the next free entry. */
static void cgi_read_violation(cgi_json *j, cgi_stats_region *r, unsigned *n)
{
    cgi_violation tmp, *v = *n < CGI_STATS_MAX_VIOLATIONS ? &r->violation[*n] : &tmp;
    memset(v, 0, sizeof *v);
    v->kind = CGI_VIOLATION_OVERLAP;
    if (!cgi_expect(j, '{')) return;
    do {
        char key[32], word[24];
        int64_t num = 0;
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        if (strcmp(key, "rule") == 0) {
            if (cgi_str(j, word, sizeof word) && strcmp(word, "sequence") == 0) v->kind = CGI_VIOLATION_SEQUENCE;
        } else if (strcmp(key, "handle") == 0) {
            if (cgi_str(j, word, sizeof word)) v->handle = strtoull(word, NULL, 16);
        } else if (strcmp(key, "count") == 0) {
            uint64_t u;
            if (cgi_count(j, key, &u)) atomic_store(&v->count, u);
        } else if (strcmp(key, "tid") == 0 || strcmp(key, "other_tid") == 0) {
            if (cgi_num(j, &num)) *(key[0] == 't' ? &v->tid : &v->other_tid) = (int32_t)num;
        } else if (strcmp(key, "api") == 0)
            cgi_str(j, v->api, sizeof v->api);
        else if (strcmp(key, "other_api") == 0)
            cgi_str(j, v->other_api, sizeof v->other_api);
        else if (strcmp(key, "entry_point") == 0)
            cgi_str(j, v->name, sizeof v->name);
        else if (strcmp(key, "other_entry_point") == 0)
            cgi_str(j, v->other, sizeof v->other);
        else if (strcmp(key, "set_entry_point") == 0)
            cgi_str(j, v->set_name, sizeof v->set_name);
        else if (strcmp(key, "access") == 0)
            cgi_str(j, v->access, sizeof v->access);
        else if (strcmp(key, "other_access") == 0)
            cgi_str(j, v->other_access, sizeof v->other_access);
        else if (strcmp(key, "param") == 0)
            cgi_str(j, v->param, sizeof v->param);
        else if (strcmp(key, "other_param") == 0)
            cgi_str(j, v->other_param, sizeof v->other_param);
        else
            cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    if (!j->err && *n < CGI_STATS_MAX_VIOLATIONS)
        atomic_store(&v->valid, 1), (*n)++;
    else if (!j->err)
        atomic_fetch_add(&r->h.violations_dropped, atomic_load(&v->count));
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
        if (strcmp(key, "api") == 0)
            cgi_str(j, fn->api, sizeof fn->api);
        else if (strcmp(key, "name") == 0)
            cgi_str(j, fn->name, sizeof fn->name);
        else if (strcmp(key, "thread") == 0)
            cgi_str(j, slot->thread, sizeof slot->thread);
        else if (strcmp(key, "state") == 0)
            cgi_str(j, state, sizeof state);
        else if (strcmp(key, "tid") == 0) {
            if (cgi_num(j, &v)) atomic_store(&slot->tid, (int32_t)v);
        } else if (strcmp(key, "entered_ns") == 0) {
            uint64_t u;
            if (cgi_count(j, key, &u)) atomic_store(&slot->entered, u);
        } else
            cgi_skip(j);
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
        while (k < nrec && !(strcmp(r->r[k].api, names[i].api) == 0 && strcmp(r->r[k].name, names[i].name) == 0))
            k++;
        if (k == nrec && nrec < CGI_STATS_MAX_RECORDS) {
            memset(&r->r[k], 0, sizeof r->r[k]);
            snprintf(r->r[k].api, sizeof r->r[k].api, "%s", names[i].api);
            snprintf(r->r[k].name, sizeof r->r[k].name, "%s", names[i].name);
            atomic_store(&r->h.nrecords, nrec + 1);
        }
        if (k < CGI_STATS_MAX_RECORDS) atomic_store(&r->slot[i].counters, &r->r[k].c);
    }
}

static void cgi_read_process_into(cgi_json *j, cgi_proc_view *v, cgi_stats_region *r, cgi_read_flight *flight,
                                  unsigned *pnflight)
{
    int have_pid = 0, have_sites = 0;
    unsigned nstalls = 0, nflight = 0, nviol = 0, nquirks = 0;
    if (!cgi_expect(j, '{')) return;
    do {
        char key[32];
        int64_t num;
        uint64_t u;
        if (!cgi_str(j, key, sizeof key) || !cgi_expect(j, ':')) return;
        if (strcmp(key, "pid") == 0 && cgi_num(j, &num))
            r->h.pid = (int32_t)num, have_pid = 1;
        else if (strcmp(key, "ppid") == 0 && cgi_num(j, &num))
            r->h.ppid = (int32_t)num;
        else if (strcmp(key, "command") == 0)
            cgi_str(j, r->h.command, sizeof r->h.command);
        else if (strcmp(key, "host") == 0)
            cgi_str(j, r->h.host, sizeof r->h.host);
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
                } else if (strcmp(ek, "signal_hook") == 0) {
                    atomic_store(&r->h.signal_hook, cgi_word(j, "true") ? 1 : (cgi_word(j, "false"), 0));
                } else
                    cgi_skip(j);
            } while (!j->err && cgi_lit(j, ','));
            cgi_expect(j, '}');
        } else if (strcmp(key, "trace") == 0) {
            if (!cgi_expect(j, '{')) return;
            v->have_trace = 1;
            do {
                char tk[16];
                if (!cgi_str(j, tk, sizeof tk) || !cgi_expect(j, ':')) return;
                if (strcmp(tk, "events") == 0)
                    cgi_count(j, tk, &v->trace_events);
                else if (strcmp(tk, "dropped") == 0)
                    cgi_count(j, tk, &v->trace_dropped);
                else if (strcmp(tk, "events") != 0 && strcmp(tk, "dropped") != 0)
                    cgi_skip(j);
            } while (!j->err && cgi_lit(j, ','));
            cgi_expect(j, '}');
        } else if (strcmp(key, "sites") == 0) {
            have_sites = 1;
            if (!cgi_expect(j, '[')) return;
            if (!cgi_lit(j, ']')) {
                do
                    cgi_read_site(j, r);
                while (!j->err && cgi_lit(j, ','));
                cgi_expect(j, ']');
            }
        } else if (strcmp(key, "stalls") == 0 || strcmp(key, "in_flight") == 0) {
            int stalls = key[0] == 's';
            if (!cgi_expect(j, '[')) break;
            if (!cgi_lit(j, ']')) {
                do {
                    if (stalls)
                        cgi_read_stall(j, r, &nstalls);
                    else
                        cgi_read_in_flight(j, r, flight, &nflight);
                } while (!j->err && cgi_lit(j, ','));
                cgi_expect(j, ']');
            }
        } else if (strcmp(key, "quirks") == 0) {
            if (!cgi_expect(j, '[')) break;
            if (!cgi_lit(j, ']')) {
                do
                    cgi_read_quirk(j, r, &nquirks);
                while (!j->err && cgi_lit(j, ','));
                cgi_expect(j, ']');
            }
        } else if (strcmp(key, "thread_violations") == 0) {
            if (!cgi_expect(j, '[')) break;
            if (!cgi_lit(j, ']')) {
                do
                    cgi_read_violation(j, r, &nviol);
                while (!j->err && cgi_lit(j, ','));
                cgi_expect(j, ']');
            }
        } else if (strcmp(key, "thread_violations_dropped") == 0) {
            if (cgi_count(j, key, &u)) atomic_fetch_add(&r->h.violations_dropped, u);
        } else if (strcmp(key, "quirks_dropped") == 0) {
            if (cgi_count(j, key, &u)) atomic_fetch_add(&r->h.quirks_dropped, u);
        } else if (strcmp(key, "handles_untracked") == 0) {
            if (cgi_count(j, key, &u)) atomic_store(&r->h.handles_untracked, u);
        } else if (strcmp(key, "stalls_dropped") == 0) {
            if (cgi_count(j, key, &u)) atomic_store(&r->h.stalls_dropped, u);
        } else if (strcmp(key, "in_flight_unknown_threads") == 0) {
            if (cgi_count(j, key, &u)) atomic_store(&r->h.threads_unslotted, (uint32_t)u);
        } else
            cgi_skip(j);
    } while (!j->err && cgi_lit(j, ','));
    cgi_expect(j, '}');
    *pnflight = nflight;
    if (!j->err) cgi_link_in_flight(r, flight, nflight);
    if (!j->err && (!have_pid || !have_sites)) cgi_json_fail(j, "a process without \"pid\" or \"sites\"");
}

/* One region, reused for each process of a saved report: a report of any
 * number of processes is read in the memory of one. */
typedef struct cgi_scratch {
    cgi_stats_region *r;
    cgi_read_flight *flight;
    unsigned nslots; /* slots the last process may have written */
} cgi_scratch;

static void cgi_read_process(cgi_json *j, cgi_proc_view *v, cgi_scratch *sc)
{
    cgi_stats_region *r = sc->r;
    /* What the last process wrote, cleared (records are cleared as they are read). */
    memset(&r->h, 0, sizeof r->h);
    memset(r->stall, 0, sizeof r->stall);
    memset(r->violation, 0, sizeof r->violation);
    memset(r->quirk, 0, sizeof r->quirk);
    memset(r->slot, 0, (sc->nslots < CGI_STATS_MAX_SLOTS ? sc->nslots + 1 : CGI_STATS_MAX_SLOTS) * sizeof r->slot[0]);
    sc->nslots = CGI_STATS_MAX_SLOTS; /* until the process is read: an error may leave any number written */
    *v = (cgi_proc_view){.region = r, .have_exit = 1};
    atomic_store(&r->h.tick_mult, 1ull << 32); /* entered_ns is in ns already */
    r->h.base = (uint64_t)(uintptr_t)r;
    unsigned nflight = CGI_STATS_MAX_SLOTS;
    cgi_read_process_into(j, v, r, sc->flight, &nflight);
    sc->nslots = nflight;
}

/* The largest saved report read (a report is about 1 KB a process). */
#define CGI_REPORT_MAX_FILE (256 << 20)

/* The bytes of one saved report (a regular file, not too large), malloc'd. */
static int cgi_report_load(const char *json_path, char **ptext, size_t *plen)
{
    *ptext = NULL, *plen = 0;
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
                        S_ISDIR(st.st_mode)                          ? "a directory"
                        : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                        : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                     : "not a regular file");
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
    size_t got = text ? cgi_pread_full(fd, text, (size_t)st.st_size, 0) : 0;
    close(fd);
    if (!text) return cgi_fail(CG_ENOMEM, "cannot read %s: out of memory", json_path);
    if (got != (size_t)st.st_size) {
        free(text);
        return cgi_fail(CG_EIO, "cannot read %s: it changed size while read", json_path);
    }
    *ptext = text, *plen = got;
    return CG_OK;
}

/* Reads one saved report; each process goes to w as it is read (w NULL:
 * the report is only checked), and its processes_without_statistics is
 * added to *lost. */
static int cgi_report_parse(const char *json_path, const char *text, size_t len, cgi_scratch *sc, cgi_report_writer *w,
                            size_t *lost)
{
    cgi_json j = {.s = text, .end = text + len};
    char schema[64] = "";
    int64_t version = -1;
    int have_processes = 0, closed = 0;
    if (!j.err && !cgi_lit(&j, '{')) cgi_json_fail(&j, "does not start with '{'");
    while (!j.err) {
        char key[32];
        if (!cgi_str(&j, key, sizeof key) || !cgi_expect(&j, ':')) break;
        if (strcmp(key, "schema") == 0)
            cgi_str(&j, schema, sizeof schema);
        else if (strcmp(key, "version") == 0)
            cgi_num(&j, &version);
        else if (strcmp(key, "processes_without_statistics") == 0) {
            uint64_t n = 0;
            if (cgi_count(&j, key, &n)) *lost += (size_t)n;
        } else if (strcmp(key, "processes") == 0) {
            have_processes = 1;
            if (strcmp(schema, CGI_REPORT_SCHEMA) != 0 || version != 1) break; /* checked below */
            if (!cgi_expect(&j, '[')) break;
            if (!cgi_lit(&j, ']')) {
                do {
                    cgi_proc_view v;
                    cgi_read_process(&j, &v, sc);
                    if (!j.err && w) cgi_report_add(w, &v);
                } while (!j.err && cgi_lit(&j, ','));
                cgi_expect(&j, ']');
            }
        } else
            cgi_skip(&j);
        if (!cgi_lit(&j, ',')) {
            closed = cgi_expect(&j, '}');
            break;
        }
    }
    /* Reports run together into one file (`cat a.json b.json`): reading
     * the first alone would drop the others' processes without a word. */
    if (closed && !j.err && (cgi_ws(&j), j.s < j.end))
        cgi_json_fail(&j, "more text after the end of the report (one report a file: give several reports as "
                          "several files)");
    if (strcmp(schema, CGI_REPORT_SCHEMA) != 0 && (!j.err || !schema[0]))
        return cgi_fail(CG_EFORMAT, "%s is not a callguard report (no \"schema\": \"callguard-report\")", json_path);
    if (version != 1 && !j.err)
        return cgi_fail(CG_EFORMAT, "%s is a callguard report of version %lld; this callguard reads version 1",
                        json_path, (long long)version);
    if (j.err)
        return cgi_fail(CG_EFORMAT, "%s: malformed or truncated report at byte %ld: %s", json_path, (long)(j.s - text),
                        j.msg);
    if (!have_processes) return cgi_fail(CG_EFORMAT, "%s: report without \"processes\"", json_path);
    return CG_OK;
}

/* Every file is read and checked first, then written from: a bad file
 * anywhere writes no report. Memory: the files' bytes, one region, and the
 * combined table (docs/report.md states the bound). */
int cg_report_merge_files(const char *const *json_paths, size_t npaths, const char *path, cg_report_format format)
{
    if (!json_paths || !npaths) return cgi_fail(CG_EINVAL, "no report file given");
    char **text = calloc(npaths, sizeof *text);
    size_t *len = calloc(npaths, sizeof *len);
    cgi_scratch sc = {.r = calloc(1, sizeof *sc.r), .flight = calloc(CGI_STATS_MAX_SLOTS, sizeof *sc.flight)};
    int rc = text && len && sc.r && sc.flight ? CG_OK : cgi_fail(CG_ENOMEM, "out of memory");
    size_t lost = 0, checked = 0;
    for (size_t i = 0; i < npaths && rc == CG_OK; i++) {
        rc = cgi_report_load(json_paths[i], &text[i], &len[i]);
        if (rc == CG_OK) rc = cgi_report_parse(json_paths[i], text[i], len[i], &sc, NULL, &checked);
    }
    cgi_report_writer *w = NULL;
    if (rc == CG_OK) rc = cgi_report_begin(path, format, &w);
    for (size_t i = 0; i < npaths && rc == CG_OK; i++)
        rc = cgi_report_parse(json_paths[i], text[i], len[i], &sc, w, &lost);
    if (w) {
        /* The processes the saved runs lost are said again, summed. */
        int end = cgi_report_end(w, lost);
        if (rc == CG_OK) rc = end;
    }
    for (size_t i = 0; text && i < npaths; i++)
        free(text[i]);
    free(text), free(len), free(sc.r), free(sc.flight);
    return rc;
}

int cg_report_convert(const char *json_path, const char *path, cg_report_format format)
{
    return cg_report_merge_files(&json_path, 1, path, format);
}
