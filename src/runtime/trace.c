/* Recording the timeline: one ring per thread (layout and bounds in
 * trace.h), and the one-line-per-call text trace.
 *
 * The call path: one thread-local pointer, five relaxed stores and a
 * release store into the thread's own ring; no lock, no system call. A
 * thread's first event claims a slot and makes its ring (under a lock,
 * with a few system calls); so does the first event after a fork. */
#define _GNU_SOURCE
#include "trace.h"

#include "clock.h"
#include "../common/errors.h"
#include "../common/file_names.h"
#include "../report/outfile.h"
#include "../report/trace_clock.h"
#include "../report/trace_dir.h"
#include "../report/trace_write.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

_Static_assert(sizeof(cgi_trace_header) == 4096, "trace header is one page");
_Static_assert(sizeof(cgi_trace_thread) == 64, "trace thread entry layout is fixed");
_Static_assert(sizeof(cgi_trace_event) == 32, "trace event layout is fixed");
_Static_assert((CGI_TRACE_EVENTS & (CGI_TRACE_EVENTS - 1)) == 0, "ring size is a power of two");
_Static_assert(CGI_TRACE_TABLE_BYTES % 4096 == 0 && CGI_TRACE_RING_BYTES % 4096 == 0, "rings are page aligned");

/* One thread's place: its table entry and its ring. */
typedef struct cgi_trace_slot {
    cgi_trace_thread *t;
    cgi_trace_event *ring;
    off_t off; /* of the ring in the file */
    int dead;  /* the file could not grow: later events are lost */
} cgi_trace_slot;

/* A ring in a file is allocated a step at a time as it fills, so a
 * thread's disk use follows its events (at most CGI_TRACE_RING_BYTES). */
#define CGI_TRACE_STEP 2048u

static pthread_mutex_t cgi_trace_lock = PTHREAD_MUTEX_INITIALIZER;
static cgi_trace_header *cgi_trace_h; /* header + thread table, one mapping */
static cgi_trace_slot cgi_trace_slots[CGI_TRACE_MAX_THREADS];
static int cgi_trace_fd = -1;   /* the process's file under callguard run; -1: private memory */
static int cgi_trace_failed;    /* no file could be made: every event is lost (and counted nowhere) */
static char cgi_trace_dir[512]; /* CALLGUARD_STATS_DIR when the timeline goes there */
static char *cgi_trace_path;    /* CALLGUARD_TRACE: written at exit() when not under callguard run */
static int cgi_trace_to_folder; /* CALLGUARD_TRACE names a folder: a file per process */
/* CALLGUARD_TRACE_LINES: stderr, or cgi_trace_lines_own. Read without a
 * lock by every traced call, so the stream it points at is never closed. */
static FILE *_Atomic cgi_trace_lines;
/* The one stream callguard opens for the lines, made at the first FILE; a
 * later FILE is dup3'd onto its descriptor (see cgi_trace_set_lines). */
static FILE *cgi_trace_lines_own;
static _Atomic int cgi_trace_configured; /* what CALLGUARD_TRACE and _TRACE_LINES switched on */

/* The calling thread's slot. Initial-exec and one pointer (docs/development.md, "Interposing": TLS
 * of dlopen'd libraries comes from a small static pool). */
static __thread cgi_trace_slot *cgi_trace_me __attribute__((tls_model("initial-exec")));

/* Space for [off, off + len) of the trace file, taken now so that a full
 * file system fails here instead of raising SIGBUS in the program when the
 * mapping is first written (docs/development.md, "Storage and privilege"). Written as zeros, not fallocated:
 * the pages are then the file's own delayed-allocation pages, which the
 * page cache drops when the CLI removes the file after the run; pages
 * dirtied in fallocated (unwritten) extents are written out to disk by the
 * next journal commit (an fsync anywhere, ext4's ordered mode), and
 * removing the file waited for that: 20-50 ms at the end of every traced
 * run here. Returns 0 or an errno. */
static int cgi_trace_reserve(int fd, off_t off, size_t len)
{
    static const char zeros[CGI_TRACE_STEP * sizeof(cgi_trace_event)];
    while (len) {
        size_t n = len < sizeof zeros ? len : sizeof zeros;
        ssize_t got = pwrite(fd, zeros, n, off);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return got < 0 ? errno : ENOSPC;
        off += got, len -= (size_t)got;
    }
    return 0;
}

static uint64_t cgi_trace_ts_ns(const struct timespec *t)
{
    return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* Where this process's events are in time for a reader on another host:
 * a (realtime, monotonic) pair, the closest of a few (a preemption between
 * the reads makes one wide), and which monotonic clock that is (the boot
 * and the time namespace). A few system calls, once per process. */
static void cgi_trace_where(cgi_trace_header *h)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        struct timespec m0, r, m1;
        clock_gettime(CLOCK_MONOTONIC, &m0);
        clock_gettime(CLOCK_REALTIME, &r);
        clock_gettime(CLOCK_MONOTONIC, &m1);
        uint64_t a = cgi_trace_ts_ns(&m0), b = cgi_trace_ts_ns(&m1);
        if (b - a >= best) continue;
        best = b - a;
        h->pair_real_ns = cgi_trace_ts_ns(&r);
        h->pair_mono_ns = a + (b - a) / 2;
    }
    h->pair_gap_ns = best > UINT32_MAX ? UINT32_MAX : (uint32_t)best;
    cgi_trace_clock_id(h->boot_id, &h->time_ns);
    if (gethostname(h->host, sizeof h->host - 1) != 0) h->host[0] = '\0';
}

/* The header and table: a file of this process in the directory, or private memory. */
static int cgi_trace_open_locked(void)
{
    size_t head = sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES;
    void *p = MAP_FAILED;
    if (cgi_trace_dir[0]) {
        char path[700];
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int len = cgi_proc_file_name(path, sizeof path, cgi_trace_dir, CGI_FILE_RINGS, getpid(),
                                     (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
        int fd = len > 0 && (size_t)len < sizeof path ? open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
        if (fd < 0) return -1;
        /* Space taken, not only extended (cgi_trace_reserve). */
        if (cgi_trace_reserve(fd, 0, head) == 0) p = mmap(NULL, head, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED) {
            close(fd);
            unlink(path);
            return -1;
        }
        cgi_trace_fd = fd;
    } else {
        p = mmap(NULL, head, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return -1;
    }
    cgi_trace_header *h = p;
    h->version = CGI_TRACE_VERSION;
    h->events_per_thread = CGI_TRACE_EVENTS;
    h->max_threads = CGI_TRACE_MAX_THREADS;
    h->pid = (int32_t)getpid();
    h->stats_start_unix_ns = cgi_stats ? cgi_stats->h.start_unix_ns : 0;
    /* Calibrated by now: the first timed call of a process calibrates
     * before it is made, and this is made at a thread's first event. */
    h->tsc = (uint32_t)cgi_clk.tsc;
    h->tick0 = cgi_clk.tick0;
    h->mono0 = cgi_clk.mono0;
    h->mult = cgi_clk.mult;
    cgi_trace_where(h);
    memcpy(h->magic, CGI_TRACE_MAGIC, sizeof CGI_TRACE_MAGIC); /* last: a reader skips a half-made file */
    cgi_trace_h = h;
    return 0;
}

static void cgi_trace_name(cgi_trace_thread *t)
{
    char name[17] = "";
    prctl(PR_GET_NAME, name, 0, 0, 0);
    uint64_t w[2];
    memcpy(w, name, sizeof w);
    atomic_store_explicit(&t->name[0], w[0], memory_order_relaxed);
    atomic_store_explicit(&t->name[1], w[1], memory_order_relaxed);
}

/* The calling thread's first event: a slot and a ring. NULL when there is
 * none to be had (the event is then counted as lost). */
__attribute__((noinline, cold)) static cgi_trace_slot *cgi_trace_claim(void)
{
    pthread_mutex_lock(&cgi_trace_lock);
    cgi_trace_slot *slot = NULL;
    if (!cgi_trace_h && !cgi_trace_failed && cgi_trace_open_locked() != 0) cgi_trace_failed = 1;
    cgi_trace_header *h = cgi_trace_h;
    uint32_t i = h ? atomic_load_explicit(&h->nthreads, memory_order_relaxed) : CGI_TRACE_MAX_THREADS;
    if (i < CGI_TRACE_MAX_THREADS) {
        void *p = MAP_FAILED;
        off_t off = (off_t)CGI_TRACE_RING_OFFSET(i);
        if (cgi_trace_fd >= 0) {
            /* Sized at once (sparse), allocated a step at a time. */
            if (ftruncate(cgi_trace_fd, off + (off_t)CGI_TRACE_RING_BYTES) == 0 &&
                cgi_trace_reserve(cgi_trace_fd, off, CGI_TRACE_STEP * sizeof(cgi_trace_event)) == 0)
                p = mmap(NULL, CGI_TRACE_RING_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, cgi_trace_fd, off);
        } else {
            p = mmap(NULL, CGI_TRACE_RING_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        }
        if (p != MAP_FAILED) {
            cgi_trace_thread *t = (cgi_trace_thread *)(h + 1) + i;
            t->tid = (int32_t)syscall(SYS_gettid);
            cgi_trace_name(t);
            slot = &cgi_trace_slots[i];
            slot->t = t;
            slot->ring = p;
            slot->off = off;
            atomic_store_explicit(&t->ready, 1, memory_order_release);
            atomic_store_explicit(&h->nthreads, i + 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&cgi_trace_lock);
    return slot;
}

/* Every CGI_TRACE_STEP events: the next step of a ring in a file, while
 * the ring is not yet full; once a ring, the thread's name again (it may
 * have been named since its first event). Nonzero: the thread's ring can
 * grow no more (the file system is full) and the event is lost. */
__attribute__((noinline, cold)) static int cgi_trace_step(cgi_trace_slot *me, uint64_t w)
{
    uint64_t at = w & (CGI_TRACE_EVENTS - 1);
    if (at == 0) cgi_trace_name(me->t);
    if (w >= CGI_TRACE_EVENTS || cgi_trace_fd < 0) return 0;
    off_t off = me->off + (off_t)(at * sizeof(cgi_trace_event));
    if (cgi_trace_reserve(cgi_trace_fd, off, CGI_TRACE_STEP * sizeof(cgi_trace_event)) == 0) return 0;
    me->dead = 1;
    return -1;
}

/* Out of line, so the timeline's path saves no registers for fprintf. */
/* The site's statistics record: its names and domain. NULL for a site past
 * the last record. */
static const cgi_stats_record *cgi_trace_record_of(const cg_counters *c, uint32_t *index)
{
    size_t r = (size_t)((const char *)c - (const char *)cgi_stats->r) / sizeof(cgi_stats_record);
    *index = r < CGI_STATS_MAX_RECORDS ? (uint32_t)r : CGI_EV_NO_RECORD;
    return r < CGI_STATS_MAX_RECORDS ? &cgi_stats->r[r] : NULL;
}

/* Out of line, so the timeline's path saves no registers for fprintf. */
__attribute__((noinline)) static void cgi_trace_line(const cg_counters *c, uint64_t call_ns, uint64_t wait_ns, int err)
{
    FILE *f = atomic_load_explicit(&cgi_trace_lines, memory_order_acquire);
    uint32_t index;
    const cgi_stats_record *r = cgi_trace_record_of(c, &index);
    if (f) fprintf(f, "%s %s %" PRIu64 " %" PRIu64 " %d\n", r ? r->api : "?", r ? r->name : "?", call_ns, wait_ns, err);
}

/* Stores one event in the thread's ring at w and publishes it. */
static inline void cgi_trace_put(cgi_trace_slot *me, uint64_t w, cg_counters *c, uint64_t t0, uint64_t call_ns,
                                 uint64_t wait_ns, int err, int held)
{
    uint64_t limit = atomic_load_explicit(&cgi_cfg.stall_ns, memory_order_relaxed);
    uint32_t flags = (err ? CGI_EV_ERROR : 0) | (held ? CGI_EV_HELD : 0) |
                     (held && call_ns >= limit ? CGI_EV_CALL_STALL : 0) |
                     (held && wait_ns >= limit ? CGI_EV_WAIT_STALL : 0);
    size_t r = (size_t)((const char *)c - (const char *)cgi_stats->r) / sizeof(cgi_stats_record);
    cgi_trace_event *e = &me->ring[w & (CGI_TRACE_EVENTS - 1)];
    atomic_store_explicit(&e->t0, t0, memory_order_relaxed);
    atomic_store_explicit(&e->call_ns, call_ns, memory_order_relaxed);
    atomic_store_explicit(&e->wait_ns, wait_ns, memory_order_relaxed);
    atomic_store_explicit(&e->rec, r < CGI_STATS_MAX_RECORDS ? (uint32_t)r : CGI_EV_NO_RECORD, memory_order_relaxed);
    atomic_store_explicit(&e->flags, flags, memory_order_relaxed);
    atomic_store_explicit(&me->t->written, w + 1, memory_order_release);
}

static int cgi_trace_call_rare(cg_counters *c, uint64_t t0, uint64_t call_ns, uint64_t wait_ns, int err, int held);

/* Everything but the common case: text lines, a thread's first event, a
 * ring that can grow no more, every CGI_TRACE_STEP-th event. These make
 * system calls (fprintf, the ring's file), and the counted paths tail-call
 * cgi_trace_call after the real call: the program's errno is kept here. */
__attribute__((noinline)) static int cgi_trace_call_slow(cg_counters *c, uint64_t t0, uint64_t call_ns,
                                                         uint64_t wait_ns, int err, int held)
{
    int saved = errno;
    int rc = cgi_trace_call_rare(c, t0, call_ns, wait_ns, err, held);
    errno = saved;
    return rc;
}

static int cgi_trace_call_rare(cg_counters *c, uint64_t t0, uint64_t call_ns, uint64_t wait_ns, int err, int held)
{
    int on = atomic_load_explicit(&cgi_cfg.trace_on, memory_order_acquire);
    if (on & CGI_TRACE_LINES) cgi_trace_line(c, call_ns, wait_ns, err);
    if (!(on & CGI_TRACE_TIMELINE)) return 0;
    cgi_trace_slot *me = cgi_trace_me;
    if (!me) {
        me = cgi_trace_me = cgi_trace_claim();
        if (!me) {
            if (cgi_trace_h) atomic_fetch_add_explicit(&cgi_trace_h->lost, 1, memory_order_relaxed);
            return 0;
        }
    }
    uint64_t w = atomic_load_explicit(&me->t->written, memory_order_relaxed);
    if (me->dead || ((w & (CGI_TRACE_STEP - 1)) == 0 && w && cgi_trace_step(me, w) != 0)) {
        atomic_fetch_add_explicit(&cgi_trace_h->lost, 1, memory_order_relaxed);
        return 0;
    }
    cgi_trace_put(me, w, c, t0, call_ns, wait_ns, err, held);
    return 0;
}

/* The common case calls nothing, so it saves no registers. */
int cgi_trace_call(cg_counters *c, uint64_t t0, uint64_t call_ns, uint64_t wait_ns, int err, int held)
{
    int on = atomic_load_explicit(&cgi_cfg.trace_on, memory_order_relaxed);
    cgi_trace_slot *me = cgi_trace_me;
    uint64_t w;
    if (__builtin_expect(
            on != CGI_TRACE_TIMELINE || !me || me->dead ||
                ((w = atomic_load_explicit(&me->t->written, memory_order_relaxed)) & (CGI_TRACE_STEP - 1)) == 0,
            0))
        return cgi_trace_call_slow(c, t0, call_ns, wait_ns, err, held);
    cgi_trace_put(me, w, c, t0, call_ns, wait_ns, err, held);
    return 0;
}

/* Whether the timeline goes to this process's file in the statistics
 * directory (callguard run writes FILE) or is written to FILE at exit. */
static void cgi_trace_write_at_exit(void);

int cgi_trace_set_file(const char *path)
{
    if (!*path || strcmp(path, "-") == 0)
        return cgi_fail(CG_EINVAL,
                        "'%s': expected a file name for the JSON timeline (one line per call on stderr: "
                        "CALLGUARD_TRACE_LINES=-)",
                        path);
    const char *dir = secure_getenv("CALLGUARD_STATS_DIR");
    if (dir && *dir) {
        if (strlen(dir) >= sizeof cgi_trace_dir)
            return cgi_fail(CG_EINVAL, "CALLGUARD_STATS_DIR=%s: path too long", dir);
    } else if (cgi_trace_is_folder(path)) {
        /* A file per process, named at exit (trace_dir.h). */
        char where[600];
        int e = cgi_trace_folder_check(path, where, sizeof where);
        if (e) return cgi_fail(CG_EINVAL, "'%s': cannot write traces in %s: %s", path, where, strerror(e));
    } else {
        /* Checked now, creating nothing; written at exit as a new file
         * renamed into place (outfile.h). */
        char where[600];
        int e = cgi_outfile_check(path, where, sizeof where);
        if (e == ENAMETOOLONG) return cgi_fail(CG_EINVAL, "'%s': cannot be created: %s", path, where);
        if (e) return cgi_fail(CG_EINVAL, "'%s': cannot write %s: %s", path, where, strerror(e));
    }
    char *copy = strdup(path);
    if (!copy) return cgi_fail(CG_ENOMEM, "out of memory");
    pthread_mutex_lock(&cgi_trace_lock);
    int first = !cgi_trace_path && !cgi_trace_dir[0];
    if (dir && *dir) snprintf(cgi_trace_dir, sizeof cgi_trace_dir, "%s", dir);
    free(cgi_trace_path);
    cgi_trace_path = copy;
    cgi_trace_to_folder = cgi_trace_is_folder(path);
    pthread_mutex_unlock(&cgi_trace_lock);
    if (first && !cgi_trace_dir[0]) atexit(cgi_trace_write_at_exit);
    atomic_fetch_or(&cgi_trace_configured, CGI_TRACE_TIMELINE);
    atomic_fetch_or(&cgi_cfg.trace_on, CGI_TRACE_TIMELINE);
    atomic_store(&cgi_cfg.stats_on, 1);
    cgi_refresh_all();
    return CG_OK;
}

int cgi_trace_set_lines(const char *path)
{
    if (!*path) return cgi_fail(CG_EINVAL, "'': cannot open for writing: empty name");
    FILE *f = stderr;
    if (strcmp(path, "-") != 0) {
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd < 0) return cgi_fail(CG_EINVAL, "'%s': cannot open for writing: %s", path, strerror(errno));
        if (cgi_trace_lines_own) {
            /* A thread may be writing a line to the old file this moment:
             * the stream stays and its descriptor is replaced, under the
             * stream's own lock, so each configuration costs no descriptor
             * and a line goes whole to one file or the other. */
            f = cgi_trace_lines_own;
            flockfile(f);
            fflush_unlocked(f);
            int e = dup3(fd, fileno(f), O_CLOEXEC) < 0 ? errno : 0;
            funlockfile(f);
            close(fd);
            if (e) return cgi_fail(CG_EIO, "'%s': cannot write the lines there: %s", path, strerror(e));
        } else {
            f = fdopen(fd, "a");
            if (!f) {
                close(fd);
                return cgi_fail(CG_ENOMEM, "out of memory");
            }
            setvbuf(f, NULL, _IOLBF, 0);
            cgi_trace_lines_own = f;
        }
    }
    atomic_store_explicit(&cgi_trace_lines, f, memory_order_release);
    atomic_fetch_or(&cgi_trace_configured, CGI_TRACE_LINES);
    atomic_fetch_or(&cgi_cfg.trace_on, CGI_TRACE_LINES);
    atomic_store(&cgi_cfg.stats_on, 1);
    cgi_refresh_all();
    return CG_OK;
}

int cg_trace_enable(int on)
{
    int configured = atomic_load(&cgi_trace_configured);
    if (on && !configured)
        return cgi_fail(CG_EINVAL, "no trace to resume: set CALLGUARD_TRACE or CALLGUARD_TRACE_LINES first");
    pthread_mutex_lock(&cgi_cfg_lock);
    atomic_store(&cgi_cfg.trace_on, on ? configured : 0);
    cgi_path_refresh(); /* cg_call's path depends on it */
    pthread_mutex_unlock(&cgi_cfg_lock);
    return CG_OK;
}

void cgi_trace_self_view(cgi_trace_view *v)
{
    memset(v, 0, sizeof *v);
    pthread_mutex_lock(&cgi_trace_lock);
    v->h = cgi_trace_h;
    if (v->h) {
        v->threads = (const cgi_trace_thread *)(v->h + 1);
        uint32_t n = atomic_load(&v->h->nthreads);
        for (uint32_t i = 0; i < n && i < CGI_TRACE_MAX_THREADS; i++)
            v->ring[i] = cgi_trace_slots[i].ring;
    }
    pthread_mutex_unlock(&cgi_trace_lock);
}

static void cgi_trace_write_at_exit(void)
{
    /* Not under callguard run, and not a forked child (which stops tracing). */
    if (cgi_trace_dir[0] || !cgi_trace_path || !(atomic_load(&cgi_trace_configured) & CGI_TRACE_TIMELINE)) return;
    cgi_trace_view *v = malloc(sizeof *v);
    int rc = v ? CG_OK : cgi_fail(CG_ENOMEM, "out of memory");
    if (v) {
        cgi_trace_self_view(v);
        rc = cgi_trace_write_view(cgi_trace_path, v, cgi_stats);
        free(v);
    }
    if (rc != CG_OK) cgi_say("%s", cg_last_error());
}

/* In the child after fork (only the forking thread exists; only system
 * calls). The parent's rings are the parent's: under callguard run the
 * child records into a file of its own, made at its first event, and so
 * does a process tracing into a folder (its own file there at exit); one
 * tracing into a file stops, since that file is its parent's (callguard
 * run traces a whole tree). */
void cgi_trace_after_fork_child(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    cgi_trace_lock = fresh;
    cgi_trace_me = NULL;
    if (!cgi_trace_dir[0] && !cgi_trace_to_folder) {
        atomic_fetch_and(&cgi_cfg.trace_on, ~CGI_TRACE_TIMELINE);
        atomic_fetch_and(&cgi_trace_configured, ~CGI_TRACE_TIMELINE);
        cgi_path_refresh();
    }
    if (!cgi_trace_h) return;
    uint32_t n = atomic_load(&cgi_trace_h->nthreads);
    for (uint32_t i = 0; i < n && i < CGI_TRACE_MAX_THREADS; i++)
        if (cgi_trace_slots[i].ring) munmap(cgi_trace_slots[i].ring, CGI_TRACE_RING_BYTES);
    memset(cgi_trace_slots, 0, sizeof cgi_trace_slots);
    munmap(cgi_trace_h, sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES);
    cgi_trace_h = NULL;
    if (cgi_trace_fd >= 0) close(cgi_trace_fd);
    cgi_trace_fd = -1;
    cgi_trace_failed = 0;
}
