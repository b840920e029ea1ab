/* A `callguard run` directory's statistics files, listed and read one at a
 * time (declared in report.h): each file read whole by pread into the
 * caller's region and checked field by field, and how each process ended
 * and what its timeline kept. */
#define _GNU_SOURCE
#include "report.h"

#include "../common/errors.h"
#include "../common/file_names.h"
#include "../common/launcher.h"
#include "../common/names.h"
#include "../common/trace_file.h"
#include "trace_read.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
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

static void cgi_fix_header(cgi_stats_region *r)
{
    if (atomic_load(&r->h.nrecords) > CGI_STATS_MAX_RECORDS) atomic_store(&r->h.nrecords, CGI_STATS_MAX_RECORDS);
    cgi_fix_str(r->h.command, sizeof r->h.command);
    cgi_fix_str(r->h.host, sizeof r->h.host);
    cgi_fix_str(r->h.rank_from, sizeof r->h.rank_from);
    if (r->h.rank > CGI_RANK_MAX) r->h.rank_set &= ~(uint32_t)CGI_RANK_SET;
    if (r->h.local_rank > CGI_RANK_MAX) r->h.rank_set &= ~(uint32_t)CGI_LOCAL_RANK_SET;
}

static void cgi_fix_records(cgi_stats_region *r)
{
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
}

static void cgi_fix_stalls(cgi_stats_region *r)
{
    for (unsigned i = 0; i < CGI_STATS_MAX_STALLS; i++) {
        cgi_stall *st = &r->stall[i];
        if (!atomic_load(&st->valid)) continue;
        cgi_fix_str(st->api, sizeof st->api);
        cgi_fix_str(st->name, sizeof st->name);
        cgi_fix_str(st->thread, sizeof st->thread);
        cgi_fix_str(st->runtime, sizeof st->runtime);
        cgi_fix_str(st->py_file, sizeof st->py_file);
        cgi_fix_str(st->py_func, sizeof st->py_func);
        cgi_fix_str(st->from_file, sizeof st->from_file);
        cgi_fix_str(st->from_func, sizeof st->from_func);
        cgi_fix_str(st->import_file, sizeof st->import_file);
        if (st->waiters < -1) st->waiters = -1;
    }
}

static void cgi_fix_quirks(cgi_stats_region *r)
{
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS; i++) {
        cgi_quirk_rec *q = &r->quirk[i];
        if (!atomic_load(&q->valid)) continue;
        cgi_fix_str(q->api, sizeof q->api);
        cgi_fix_str(q->name, sizeof q->name);
        cgi_fix_str(q->domain, sizeof q->domain);
        cgi_fix_str(q->sites, sizeof q->sites);
        cgi_fix_str(q->waiters, sizeof q->waiters);
        cgi_fix_str(q->source, sizeof q->source);
        cgi_fix_str(q->why, sizeof q->why);
        cgi_fix_str(q->driver, sizeof q->driver);
        cgi_fix_str(q->version, sizeof q->version);
        cgi_fix_str(q->library, sizeof q->library);
        cgi_fix_str(q->not_applied, sizeof q->not_applied);
        if (q->applied > 1) q->applied = 1;
    }
}

static void cgi_fix_violations(cgi_stats_region *r)
{
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
}

static void cgi_fix_hang(cgi_hang_page *pg)
{
    if (pg->ncalls > CGI_HANG_MAX_CALLS) pg->ncalls = CGI_HANG_MAX_CALLS;
    if (pg->in_flight < pg->ncalls || pg->in_flight > CGI_STATS_MAX_SLOTS)
        pg->in_flight = pg->in_flight < pg->ncalls ? pg->ncalls : CGI_STATS_MAX_SLOTS;
    if (pg->nwaiters > CGI_HANG_MAX_WAITERS) pg->nwaiters = CGI_HANG_MAX_WAITERS;
    pg->asked = pg->asked != 0;
    pg->over = pg->over != 0;
    for (unsigned i = 0; i < pg->nwaiters; i++)
        cgi_fix_str(pg->waiter[i].thread, sizeof pg->waiter[i].thread);
    for (unsigned i = 0; i < pg->ncalls; i++) {
        cgi_hang_call *e = &pg->call[i];
        e->loader = e->loader != 0;
        if (e->py_via > CGI_PY_VIA_PROC_MEM) e->py_via = CGI_PY_VIA_FIRST;
        if (e->held > CGI_HELD_UNKNOWN) e->held = CGI_HELD_UNKNOWN;
        cgi_fix_str(e->thread, sizeof e->thread);
        cgi_fix_str(e->api, sizeof e->api);
        cgi_fix_str(e->name, sizeof e->name);
        cgi_fix_str(e->domain, sizeof e->domain);
        cgi_fix_str(e->runtime, sizeof e->runtime);
        cgi_fix_str(e->py_file, sizeof e->py_file);
        cgi_fix_str(e->py_func, sizeof e->py_func);
    }
}

static void cgi_fix_slots(cgi_stats_region *r)
{
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        cgi_slot *slot = &r->slot[i];
        if (atomic_load(&slot->tid) == 0) continue;
        for (size_t c = 0; c < sizeof slot->thread; c++)
            if (slot->thread[c] && ((unsigned char)slot->thread[c] < 0x20 || slot->thread[c] == 0x7f))
                slot->thread[c] = '?';
    }
}

/* Every field the reports read, checked: the record count within the
 * file, strings terminated and printable, policy values in range. A field
 * added to the file gets its check in the function of its part. */
static void cgi_stats_sanitize(cgi_stats_region *r)
{
    cgi_fix_header(r);
    cgi_fix_records(r);
    cgi_fix_stalls(r);
    cgi_fix_quirks(r);
    cgi_fix_violations(r);
    cgi_fix_hang(&r->hang);
    cgi_fix_slots(r);
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
    cgi_stats_fold(r);
    return 0;
}

/* Events kept and dropped of a trace file, from its header and thread table
 * (head: what was read of them; size: the file's): the counts go into the
 * report; the rings are read by the trace merge alone. */
static int cgi_trace_counts(const char *head, size_t got, uint64_t *kept, uint64_t *dropped)
{
    cgi_trace_view v;
    if (cgi_trace_view_of_file(head, got, -1, &v) != 0) return -1;
    cgi_trace_count(&v, kept, dropped);
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
        cgi_file_name is;
        if (!cgi_file_name_parse(e->d_name, CGI_FILE_RINGS, &is)) continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            if (fd >= 0) close(fd);
            continue;
        }
        size_t got = cgi_pread_full(fd, head, sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES, 0);
        close(fd);
        uint64_t kept, dropped;
        if (cgi_trace_counts(head, got, &kept, &dropped) != 0) continue;
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
        cgi_file_name is;
        if (cut && strcmp(e->d_name, CGI_STATS_LOST_FILE) == 0) *cut += cgi_lost_count(dirfd(d));
        if (!cgi_file_name_parse(e->d_name, CGI_FILE_STATS, &is)) continue;
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
