/* The hang page (docs/report.md "Hangs"): when a guarded call has been in
 * flight for the hang threshold (1 s, or CALLGUARD_HANG_MS), the watchdog
 * writes every call in flight in the process into the statistics file's
 * hang page, which another process can read while the program hangs and
 * the report keeps when it is killed; with CALLGUARD_HANG_MS also to
 * stderr, as one block of lines. Again only when the hung calls change.
 * A call that was in flight that long and then returned is kept among
 * the process's slowest late calls, as the page had it (cgi_hang_late).
 *
 * Runs on the watchdog thread only: it reads the slots, never calls into
 * an interpreter, and writes with one write(2) (no stdio lock that a
 * program thread could hold). What a slot says of a call (the runtime
 * held, the Python line) its thread noted at entry when hang reports were
 * asked for; else the watchdog reads it from the interpreter's memory
 * (pyread.c), never by a call: nothing per call pays for the page. It uses
 * what it read only while the call's number (seq) stays the same.
 *
 * A block's text is built on the watchdog's own stack: a fork copies no
 * thread but the forking one, so a forked child's watchdog never starts
 * with a block its parent's was building or writing (issue 32, N6/N7).
 * And it goes only to the file that was the process's stderr when it
 * started: a program that closed fd 2 and opened its data file (which got
 * fd 2) must not find callguard's lines in its data (N8). */
#define _GNU_SOURCE
#include "clock.h"
#include "../common/behind.h"
#include "../common/message.h"
#include "python.h"
#include "pyread.h"
#include "resolve.h"
#include "selfread.h"
#include "site.h"
#include "stats.h"
#include "wait_args.h"
#include "watchdog.h"

#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* One block of lines being built (on the watchdog's stack). */
typedef struct cgi_hang_text {
    size_t len;
    char buf[CGI_HANG_MAX_CALLS * 700 + 1024];
} cgi_hang_text;

/* The file that was fd 2 at start-up (cgi_hang_note_stderr). */
static dev_t cgi_err_dev;
static ino_t cgi_err_ino;
static int cgi_err_known;

void cgi_hang_note_stderr(void)
{
    struct stat st;
    cgi_err_known = fstat(2, &st) == 0;
    if (cgi_err_known) cgi_err_dev = st.st_dev, cgi_err_ino = st.st_ino;
}

/* The block's lines are at most this wide: a longer one goes on, at a
 * space, on lines indented further (the text report's rule). */
#define CGI_HANG_WIDTH 100

static void cgi_hang_put(cgi_hang_text *t, int indent, const char *s, size_t n)
{
    int k = snprintf(t->buf + t->len, sizeof t->buf - t->len, "callguard: hang: %*s%.*s\n", indent, "", (int)n, s);
    if (k > 0 && (size_t)k < sizeof t->buf - t->len) t->len += (size_t)k;
}

/* Appends "callguard: hang: LINE\n", the line made safe to print (message.c)
 * and fitted to CGI_HANG_WIDTH columns. */
static void cgi_hang_line(cgi_hang_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cgi_hang_line(cgi_hang_text *t, const char *fmt, ...)
{
    char raw[1024], line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    cgi_one_line(line, sizeof line, raw);
    const size_t head = sizeof "callguard: hang: " - 1, own = strspn(line, " ");
    const char *s = line;
    size_t n = strlen(line), lead = 0;
    /* Columns, not bytes: a byte that continues a UTF-8 sequence adds none. */
    for (;;) {
        size_t room = CGI_HANG_WIDTH - head - lead, cols = 0, i = 0, cut = 0, slash = 0;
        for (; i < n && cols <= room; i++) {
            cols += ((unsigned char)s[i] & 0xc0) != 0x80;
            if (s[i] == ' ' && cols <= room && i > (lead ? 0 : own)) cut = i;
            if (s[i] == '/' && cols < room) slash = i + 1;
        }
        if (cols <= room) break;
        if (!cut) cut = slash; /* one word longer than the room: after a path's '/' */
        if (!cut) break;       /* else whole */
        cgi_hang_put(t, (int)lead, s, cut);
        s += cut, n -= cut;
        while (n && *s == ' ')
            s++, n--;
        lead = own + 4;
    }
    cgi_hang_put(t, (int)lead, s, n);
}

/* Writes the block to fd 2 while fd 2 is still the file it was at start-up
 * (closed, or another file since: nothing is written; the statistics
 * file's hang page still has it). Never a dup of fd 2 kept open: a reader
 * of the program's stderr pipe must see its end when the program closes it. */
static void cgi_hang_write(cgi_hang_text *t)
{
    struct stat st;
    if (!cgi_err_known || fstat(2, &st) != 0 || st.st_dev != cgi_err_dev || st.st_ino != cgi_err_ino) return;
    const char *p = t->buf;
    size_t left = t->len;
    while (left) {
        ssize_t n = write(2, p, left);
        if (n <= 0) break;
        p += n, left -= (size_t)n;
    }
}

static const cgi_stats_record *cgi_hang_record(const cg_counters *c)
{
    const cgi_stats_record *r = (const cgi_stats_record *)((const char *)c - offsetof(cgi_stats_record, c));
    if ((const char *)r < (const char *)cgi_stats->r ||
        (const char *)r >= (const char *)(cgi_stats->r + CGI_STATS_MAX_RECORDS))
        return NULL;
    return r;
}

/* The Python line of the call in flight on a thread: read from the
 * thread's own frames (pyread.c: no CPython call, no fault on a stale
 * pointer), the innermost frame outside the import machinery. Kept only
 * when the call is still the same one after the read: its frames cannot
 * change while it is inside the driver. 1 when read; py_via says how when
 * it was not the first way (selfread.h). */
static int cgi_hang_read_frames(cgi_hang_call *e, cgi_slot *slot, uint64_t seq, unsigned long pthread_id)
{
    if (atomic_load_explicit(&cgi_py.state, memory_order_acquire) <= 0 || e->tid <= 0) return 0;
    cgi_pyframe fr[8];
    int n = 0;
    if (cgi_pyread_frames(e->tid, pthread_id, fr, 8, &n) != CGI_PYREAD_OK) return 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(fr[i].file, "<frozen ", 8) == 0 || fr[i].line < 0) continue;
        if (atomic_load_explicit(&slot->seq, memory_order_seq_cst) != seq) return 0;
        snprintf(e->py_file, sizeof e->py_file, "%s", fr[i].file);
        snprintf(e->py_func, sizeof e->py_func, "%s", fr[i].function);
        e->py_line = fr[i].line;
        e->py_via = cgi_selfread_way() == CGI_SELFREAD_MEM ? CGI_PY_VIA_PROC_MEM : CGI_PY_VIA_FIRST;
        return 1;
    }
    return 0;
}

/* The line its thread noted at entry (hang reports asked for, the GIL
 * held), only while it is still this call's: the name lives as long as
 * the frame that made the call. */
static void cgi_hang_noted_line(cgi_hang_call *e, cgi_slot *slot, uint64_t seq)
{
    if (atomic_load_explicit(&slot->where_seq, memory_order_acquire) != seq) return;
    const char *file = atomic_load_explicit(&slot->py_file, memory_order_relaxed);
    int line = atomic_load_explicit(&slot->py_line, memory_order_relaxed);
    if (file) snprintf(e->py_file, sizeof e->py_file, "%s", file);
    /* Still this call's: then what was read was its line (loads stay in
     * order on x86; elsewhere a rare report may show a later line). */
    if (atomic_load_explicit(&slot->where_seq, memory_order_seq_cst) == seq &&
        atomic_load_explicit(&slot->seq, memory_order_seq_cst) == seq)
        e->py_line = line;
    else
        e->py_file[0] = '\0';
}

/* Does the call hold its runtime? Noted at entry where the mode notes it
 * (hang reports asked for); for CPython else read from the GIL's state;
 * else unknown unless every mode in use notes it. */
static uint32_t cgi_hang_held(cgi_slot *slot, uint64_t seq, const cg_adapter *ad, pid_t tid, unsigned long pth)
{
    if (!ad) return CGI_HELD_NO;
    if (atomic_load(&slot->held_seq) == seq) return CGI_HELD_YES;
    if (ad == &cgi_cpython_adapter && atomic_load_explicit(&cgi_py.state, memory_order_acquire) > 0) {
        int gil = cgi_pyread_gil_held(tid, pth);
        if (gil >= 0 && atomic_load(&slot->seq) == seq) return gil ? CGI_HELD_YES : CGI_HELD_NO;
    }
    int noted = atomic_load(&cgi_cfg.hang_ns) && atomic_load(&cgi_cfg.timing) == CGI_TIMING_SAMPLED &&
                !atomic_load(&cgi_cfg.trace_on) && ad != &cgi_cpython_adapter;
    return noted ? CGI_HELD_NO : CGI_HELD_UNKNOWN;
}

/* The record of the call v saw in flight; NULL when it has left meanwhile. */
static const cgi_stats_record *cgi_hang_in_call(const cgi_wd_call *v)
{
    cg_counters *c = atomic_load_explicit(&cgi_stats->slot[v->slot].counters, memory_order_acquire);
    return c && c != &cgi_no_counters ? cgi_hang_record(c) : NULL;
}

/* Fills e from the slot of v; 0 when the call has left meanwhile. */
static int cgi_hang_fill(cgi_hang_call *e, const cgi_wd_call *v, const cg_adapter *ad)
{
    cgi_slot *slot = &cgi_stats->slot[v->slot];
    const cgi_stats_record *r = cgi_hang_in_call(v);
    if (!r) return 0;
    memset(e, 0, sizeof *e);
    e->tid = atomic_load(&slot->tid);
    e->seq = v->seq;
    e->age_ns = v->age_ns;
    e->waiting = atomic_load(&slot->waiting) != 0;
    memcpy(e->thread, slot->thread, sizeof e->thread - 1);
    snprintf(e->api, sizeof e->api, "%s", r->api);
    snprintf(e->name, sizeof e->name, "%s", r->name);
    snprintf(e->domain, sizeof e->domain, "%s", r->domain);
    if (ad) snprintf(e->runtime, sizeof e->runtime, "%s", ad->name ? ad->name : "?");
    unsigned long pth = cgi_slot_pthread_id(v->slot);
    e->held = cgi_hang_held(slot, v->seq, ad, e->tid, pth);
    cgi_wait_args_fill(e, slot, v->seq, &r->c);
    if (!cgi_hang_read_frames(e, slot, v->seq, pth)) cgi_hang_noted_line(e, slot, v->seq);
    return 1;
}

/* Reads a small /proc file into buf (NUL-terminated); its length, or -1. */
static ssize_t cgi_hang_read(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0) return -1;
    buf[n] = '\0';
    return n;
}

/* Where glibc's dynamic loader keeps its state, its locks among it
 * (_rtld_global: dl_load_lock, dl_load_write_lock); 0 when unknown. */
static uintptr_t cgi_rtld_lo, cgi_rtld_hi;

void cgi_hang_prepare(void)
{
    static int done; /* the watchdog starts once a process (a forked child: the parent's answer holds) */
    if (done) return;
    done = 1;
    cgi_symbol_bounds("_rtld_global", &cgi_rtld_lo, &cgi_rtld_hi);
}

/* The futex a thread is asleep on, from its system call as the kernel
 * shows it ("202 0xADDR ..." on x86-64); 0 when it is in no futex wait. */
static uintptr_t cgi_hang_futex_in(const char *buf)
{
#ifdef SYS_futex
    char *end;
    long nr = strtol(buf, &end, 10);
    if (end == buf || nr != SYS_futex) return 0;
    return (uintptr_t)strtoull(end, NULL, 16);
#else
    (void)buf;
    return 0;
#endif
}

static uintptr_t cgi_hang_futex_of(long tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
    if (cgi_hang_read(path, buf, sizeof buf) <= 0) return 0;
    return cgi_hang_futex_in(buf);
}

/* Is thread `tid` asleep on a futex inside the interpreter's runtime state
 * (the GIL's mutex or condition: python.h)? */
static int cgi_hang_waits_for_gil(long tid)
{
    uintptr_t addr = cgi_hang_futex_of(tid);
    return addr && addr >= cgi_py.runtime_lo && addr < cgi_py.runtime_hi;
}

/* Threads other than the caller asleep on a futex in the interpreter's
 * runtime state, for a stall as it ends (stall.c): the caller still holds
 * the GIL, so each of them began waiting during the stall and still waits.
 * CPython's take_gil waits in slices of 5 ms and runs for a moment in
 * between: a thread seen running is looked at twice more. -1 when it
 * cannot be told (no CPython state found, no /proc). Open, read and
 * getdents64 alone, as above. */
int cgi_hang_gil_waiters(void)
{
    if (!cgi_py.runtime_hi) return -1;
    int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return -1;
    long me = syscall(SYS_gettid);
    int n = 0;
    char ents[4096];
    long got;
    while ((got = syscall(SYS_getdents64, dir, ents, sizeof ents)) > 0) {
        for (long off = 0; off < got;) {
            unsigned short reclen;
            memcpy(&reclen, ents + off + 16, sizeof reclen);
            long tid = strtol(ents + off + 19, NULL, 10);
            off += reclen ? reclen : got;
            if (tid <= 0 || tid == me) continue;
            char path[64], buf[256];
            snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", tid);
            for (int look = 0; look < 3; look++) {
                if (cgi_hang_read(path, buf, sizeof buf) <= 0) break;
                if (strncmp(buf, "running", 7) == 0) {
                    sched_yield();
                    continue;
                }
                uintptr_t addr = cgi_hang_futex_in(buf);
                n += addr && addr >= cgi_py.runtime_lo && addr < cgi_py.runtime_hi;
                break;
            }
        }
    }
    close(dir);
    return n;
}

/* Is it asleep on one of the dynamic loader's locks (a dlopen inside the
 * driver call waiting for a thread in dl_iterate_phdr, say)? */
static int cgi_hang_waits_for_loader(long tid)
{
    uintptr_t addr = cgi_hang_futex_of(tid);
    return addr && addr >= cgi_rtld_lo && addr < cgi_rtld_hi;
}

/* The other side of a hang under CPython: threads in no guarded call that
 * wait for the GIL (a thread holding it is stuck in a call; one that
 * needs it, in a callback or Python code, waits). Read from /proc with
 * open, read and getdents64 alone: no allocation, no loader lock. */
static unsigned cgi_hang_waiters(cgi_hang_page *pg, const cg_adapter *ad)
{
    if (ad != &cgi_cpython_adapter || !cgi_py.runtime_hi) return 0;
    int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return 0;
    long me = syscall(SYS_gettid);
    unsigned n = 0;
    char ents[4096];
    long got;
    while (n < CGI_HANG_MAX_WAITERS && (got = syscall(SYS_getdents64, dir, ents, sizeof ents)) > 0) {
        for (long off = 0; off < got && n < CGI_HANG_MAX_WAITERS;) {
            /* struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name */
            unsigned short reclen;
            memcpy(&reclen, ents + off + 16, sizeof reclen);
            const char *name = ents + off + 19;
            off += reclen ? reclen : got;
            long tid = strtol(name, NULL, 10);
            if (tid <= 0 || tid == me) continue;
            int in_call = 0;
            for (unsigned i = 0; i < pg->ncalls && !in_call; i++)
                in_call = pg->call[i].tid == tid;
            if (in_call || !cgi_hang_waits_for_gil(tid)) continue;
            cgi_hang_waiter *w = &pg->waiter[n++];
            memset(w, 0, sizeof *w);
            w->tid = (int32_t)tid;
            char path[64];
            snprintf(path, sizeof path, "/proc/self/task/%ld/comm", tid);
            if (cgi_hang_read(path, w->thread, sizeof w->thread) > 0) w->thread[strcspn(w->thread, "\n")] = '\0';
        }
    }
    close(dir);
    return n;
}

/* One call of the page as a line of the stderr block. */
static void cgi_hang_print_call(cgi_hang_text *t, const cgi_hang_call *e)
{
    char what[700];
    size_t w = 0;
    what[0] = '\0';
#define CGI_WHAT(...) (w < sizeof what ? (w += (size_t)snprintf(what + w, sizeof what - w, __VA_ARGS__)) : w)
    if (e->waiting && e->holder_tid)
        CGI_WHAT(", waits for lock \"%s\" held by tid %d", e->domain, e->holder_tid);
    else if (e->waiting)
        CGI_WHAT(", waits for lock \"%s\"", e->domain[0] ? e->domain : "(a handle lock)");
    if (e->loader) CGI_WHAT(", waits for the dynamic loader's lock (glibc)");
    int py = strcmp(e->runtime, "cpython") == 0;
    if (e->held == CGI_HELD_YES)
        py ? CGI_WHAT(", holds the GIL (cpython)") : CGI_WHAT(", holds the %s runtime", e->runtime);
    else if (e->held == CGI_HELD_UNKNOWN)
        py ? CGI_WHAT(", holds the GIL: unknown") : CGI_WHAT(", holds the %s runtime: unknown", e->runtime);
    if (e->py_file[0]) CGI_WHAT(", python %s:%d", e->py_file, e->py_line);
    if (e->py_file[0] && e->py_func[0]) CGI_WHAT(" in %s", e->py_func);
    if (e->py_file[0] && e->py_via == CGI_PY_VIA_PROC_MEM) CGI_WHAT(" (read via /proc/self/mem)");
#undef CGI_WHAT
    what[sizeof what - 1] = '\0';
    char args[CG_WAIT_ARGS_MAX * 66];
    cgi_hang_args_text(e, args, sizeof args);
    cgi_hang_line(t, "  tid %d \"%s\": %s %s%s%s, %" PRIu64 " ms%s", e->tid, e->thread, e->api, e->name,
                  args[0] ? " " : "", args, e->age_ns / 1000000u, what);
}

/* The page as a block of lines on stderr (CALLGUARD_HANG_MS). */
static void cgi_hang_print(const cgi_hang_page *pg)
{
    cgi_hang_text t;
    t.len = 0;
    unsigned long ms = (unsigned long)(pg->hang_ns / 1000000u);
    char shown[32] = "";
    if (pg->in_flight > pg->ncalls) snprintf(shown, sizeof shown, " (%u shown)", pg->ncalls);
    cgi_hang_line(&t, "pid %d: a guarded call in flight for %lu ms or more (CALLGUARD_HANG_MS=%lu); %u in flight%s:",
                  (int)getpid(), ms, ms, pg->in_flight, shown);
    for (unsigned i = 0; i < pg->ncalls; i++) {
        cgi_hang_print_call(&t, &pg->call[i]);
        int h;
        const char *quirk = cgi_behind_quirk(cgi_stats->quirk, CGI_STATS_MAX_QUIRKS, pg->call, pg->ncalls, i, &h);
        if (quirk)
            cgi_hang_line(&t,
                          "    thread %d \"%s\" waits behind thread %d \"%s\"'s %s on the same device: the driver "
                          "holds the device's lock while it waits (%s)",
                          pg->call[i].tid, pg->call[i].thread, pg->call[h].tid, pg->call[h].thread, pg->call[h].name,
                          quirk);
    }
    for (unsigned i = 0; i < pg->nwaiters; i++)
        cgi_hang_line(&t, "  tid %d \"%s\": in no guarded call, waits for the GIL (cpython)", pg->waiter[i].tid,
                      pg->waiter[i].thread);
    cgi_hang_line(&t, "end");
    cgi_hang_write(&t);
}

void cgi_hang_report(const cgi_wd_call *v, unsigned n, uint64_t now_ns)
{
    cgi_hang_page *pg = &cgi_stats->hang;
    const cg_adapter *ad = atomic_load(&cgi_cfg.adapter);
    atomic_fetch_add(&pg->gen, 1); /* odd: being written */
    unsigned k = 0, all = 0;       /* the calls listed, and all of them (past the list: counted) */
    for (unsigned i = 0; i < n; i++) {
        if (k < CGI_HANG_MAX_CALLS && cgi_hang_fill(&pg->call[k], &v[i], ad))
            k++, all++;
        else if (k == CGI_HANG_MAX_CALLS && cgi_hang_in_call(&v[i]))
            all++;
    }
    /* Who holds the lock a call waits for: a call in flight, not waiting,
     * on a site of the same lock domain. */
    for (unsigned i = 0; i < k; i++) {
        cgi_hang_call *e = &pg->call[i];
        if (!e->waiting || !e->domain[0]) continue;
        for (unsigned j = 0; j < k; j++)
            if (j != i && !pg->call[j].waiting && strcmp(pg->call[j].domain, e->domain) == 0) {
                e->holder_tid = pg->call[j].tid;
                break;
            }
    }
    pg->ncalls = k, pg->in_flight = all;
    for (unsigned i = 0; i < k; i++)
        pg->call[i].loader = cgi_hang_waits_for_loader(pg->call[i].tid);
    pg->nwaiters = cgi_hang_waiters(pg, ad);
    pg->at_ns = now_ns;
    pg->hang_ns = atomic_load(&cgi_cfg.record_ns);
    pg->asked = atomic_load(&cgi_cfg.hang_ns) != 0;
    pg->over = 0;
    atomic_fetch_add(&pg->reports, 1);
    atomic_fetch_add(&pg->gen, 1); /* even: whole */
    if (pg->asked) cgi_hang_print(pg);
}

void cgi_hang_over(uint64_t now_ns)
{
    cgi_hang_page *pg = &cgi_stats->hang;
    atomic_fetch_add(&pg->gen, 1);
    pg->over = 1;
    atomic_fetch_add(&pg->gen, 1);
    if (!pg->asked) return;
    cgi_hang_text t;
    t.len = 0;
    cgi_hang_line(&t, "over: the calls reported returned (%" PRIu64 " ms after the report)",
                  (now_ns - pg->at_ns) / 1000000u);
    cgi_hang_write(&t);
}

/* ---- late calls: in flight for the hang threshold, then returned ------------- */

/* The hang page's entry of a late call (its thread and number), or, where
 * the page lists none (more calls were in flight than it keeps), what the
 * watchdog knew of it: its site and its thread's name. */
static void cgi_hang_late_fill(cgi_hang_call *e, const cgi_wd_late *v)
{
    const cgi_hang_page *pg = &cgi_stats->hang;
    for (uint32_t i = 0; i < pg->ncalls && i < CGI_HANG_MAX_CALLS; i++)
        if (pg->call[i].tid == v->tid && pg->call[i].seq == v->seq) {
            *e = pg->call[i];
            return;
        }
    memset(e, 0, sizeof *e);
    e->tid = v->tid;
    e->seq = v->seq;
    const cgi_stats_record *r = v->c && v->c != &cgi_no_counters ? cgi_hang_record(v->c) : NULL;
    snprintf(e->api, sizeof e->api, "%s", r ? r->api : "?");
    snprintf(e->name, sizeof e->name, "%s", r ? r->name : "?");
    if (r) snprintf(e->domain, sizeof e->domain, "%s", r->domain);
    const cgi_slot *slot = &cgi_stats->slot[v->slot];
    if (atomic_load(&slot->tid) == v->tid) memcpy(e->thread, slot->thread, sizeof e->thread - 1);
    const cg_adapter *ad = atomic_load(&cgi_cfg.adapter);
    if (ad) snprintf(e->runtime, sizeof e->runtime, "%s", ad->name ? ad->name : "?");
    e->held = ad ? CGI_HELD_UNKNOWN : CGI_HELD_NO;
}

void cgi_hang_late(const cgi_wd_late *v, unsigned n, uint64_t now_ns)
{
    cgi_late_page *lp = &cgi_stats->late;
    for (unsigned k = 0; k < n; k++) {
        atomic_fetch_add(&lp->count, 1);
        /* A free entry, else the fastest kept when this one was slower. */
        cgi_late_call *to = NULL;
        for (unsigned i = 0; i < CGI_LATE_MAX; i++) {
            cgi_late_call *e = &lp->call[i];
            if (!atomic_load_explicit(&e->valid, memory_order_relaxed)) {
                to = e;
                break;
            }
            if (!to || e->ns < to->ns) to = e;
        }
        if (atomic_load_explicit(&to->valid, memory_order_relaxed) && to->ns >= v[k].ns) continue;
        atomic_store_explicit(&to->valid, 0, memory_order_release);
        to->ns = v[k].ns;
        to->ended_ns = now_ns;
        cgi_hang_late_fill(&to->call, &v[k]);
        atomic_store_explicit(&to->valid, 1, memory_order_release);
    }
}
