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
_Static_assert(sizeof(cgi_trace_event) == 32, "trace event head layout is fixed");
_Static_assert(sizeof(cgi_trace_chunk) == 64, "trace chunk head layout is fixed");
_Static_assert(CGI_TRACE_TABLE_BYTES % 4096 == 0 && CGI_TRACE_CHUNK_BYTES % CGI_TRACE_STEP_BYTES == 0,
               "chunks are page aligned and whole steps");

/* The most an event takes: its head, then its words. */
#define CGI_TRACE_EVENT_MAX (sizeof(cgi_trace_event) + 8u * CGI_TRACE_WORDS_MAX)

/* One thread's place: its table entry and its current chunk, mapped. An
 * event goes at pos when it ends by limit (the chunk's space taken so
 * far); else the slow path takes the next step, or the next chunk. */
typedef struct cgi_trace_slot {
    cgi_trace_thread *t;
    cgi_trace_chunk *c; /* the current chunk (mapped), or NULL */
    char *pos, *limit, *end;
    off_t off;      /* of the current chunk in the file */
    off_t oldest;   /* of the thread's oldest chunk still kept (a latest-events bound reuses it) */
    uint32_t index; /* in the thread table */
    int dead;       /* no event is kept any more: left out and counted (a first-events bound; a full file system) */
} cgi_trace_slot;

static pthread_mutex_t cgi_trace_lock = PTHREAD_MUTEX_INITIALIZER;
static cgi_trace_header *cgi_trace_h; /* header + thread table, one mapping */
static cgi_trace_slot cgi_trace_slots[CGI_TRACE_MAX_THREADS];
static int cgi_trace_fd = -1;         /* the process's trace file (an unlinked one when written at exit) */
static int cgi_trace_failed;          /* no file could be made: every event is lost (and counted nowhere) */
static char cgi_trace_dir[512];       /* CALLGUARD_STATS_DIR when the timeline goes there */
static char *cgi_trace_path;          /* CALLGUARD_TRACE: written at exit() when not under callguard run */
static int cgi_trace_to_folder;       /* CALLGUARD_TRACE names a folder: a file per process */
static uint64_t cgi_trace_max_chunks; /* CALLGUARD_TRACE_MAX in chunks; 0: no bound */
static uint32_t cgi_trace_keep;       /* CGI_TRACE_KEEP_* */
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
    static const char zeros[CGI_TRACE_STEP_BYTES];
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

/* A file no one else can open, for a process that writes its timeline at
 * exit: unlinked from the start (O_TMPFILE) in the folder the timeline
 * goes to, else in TMPDIR or /tmp. -1 when none can be made. */
static int cgi_trace_tmpfile(void)
{
    char dir[600] = "";
    if (cgi_trace_path) {
        snprintf(dir, sizeof dir, "%s", cgi_trace_path);
        if (!cgi_trace_to_folder) {
            char *slash = strrchr(dir, '/');
            if (slash)
                slash[slash == dir] = '\0';
            else
                snprintf(dir, sizeof dir, ".");
        }
    }
    const char *tmp = secure_getenv("TMPDIR");
    const char *where[] = {dir, tmp && *tmp ? tmp : "/tmp", "/tmp"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        if (!where[i][0]) continue;
        int fd = open(where[i], O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
        if (fd >= 0) return fd;
    }
    return -1;
}

/* The header and table, in a file of this process in the statistics
 * directory, or in an unlinked file (cgi_trace_tmpfile). */
static int cgi_trace_open_locked(void)
{
    size_t head = CGI_TRACE_DATA_OFFSET;
    void *p = MAP_FAILED;
    char path[700] = "";
    int fd = -1;
    if (cgi_trace_dir[0]) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int len = cgi_proc_file_name(path, sizeof path, cgi_trace_dir, CGI_FILE_RINGS, getpid(),
                                     (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
        fd = len > 0 && (size_t)len < sizeof path ? open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)
                                                  : -1;
    } else {
        fd = cgi_trace_tmpfile();
    }
    if (fd < 0) return -1;
    /* Space taken, not only extended (cgi_trace_reserve). */
    if (cgi_trace_reserve(fd, 0, head) == 0) p = mmap(NULL, head, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        if (path[0]) unlink(path);
        return -1;
    }
    cgi_trace_fd = fd;
    cgi_trace_header *h = p;
    h->version = CGI_TRACE_VERSION;
    h->chunk_bytes = CGI_TRACE_CHUNK_BYTES;
    h->max_threads = CGI_TRACE_MAX_THREADS;
    h->pid = (int32_t)getpid();
    h->keep = cgi_trace_keep;
    h->max_chunks = cgi_trace_max_chunks;
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

/* The calling thread's first event: a slot in the table (its chunk comes
 * with the event, cgi_trace_room). NULL when there is none to be had (the
 * event is then counted as lost). */
__attribute__((noinline, cold)) static cgi_trace_slot *cgi_trace_claim(void)
{
    pthread_mutex_lock(&cgi_trace_lock);
    cgi_trace_slot *slot = NULL;
    if (!cgi_trace_h && !cgi_trace_failed && cgi_trace_open_locked() != 0) cgi_trace_failed = 1;
    cgi_trace_header *h = cgi_trace_h;
    uint32_t i = h ? atomic_load_explicit(&h->nthreads, memory_order_relaxed) : CGI_TRACE_MAX_THREADS;
    if (i < CGI_TRACE_MAX_THREADS) {
        cgi_trace_thread *t = (cgi_trace_thread *)(h + 1) + i;
        t->tid = (int32_t)syscall(SYS_gettid);
        cgi_trace_name(t);
        slot = &cgi_trace_slots[i];
        memset(slot, 0, sizeof *slot);
        slot->t = t;
        slot->index = i;
        atomic_store_explicit(&h->nthreads, i + 1, memory_order_release);
    }
    pthread_mutex_unlock(&cgi_trace_lock);
    return slot;
}

/* Maps chunk `off` as the thread's current one, its space taken up to
 * `taken` bytes, and starts it at event number w. */
static int cgi_trace_enter_chunk(cgi_trace_slot *me, off_t off, size_t taken, uint64_t w)
{
    void *p = mmap(NULL, CGI_TRACE_CHUNK_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, cgi_trace_fd, off);
    if (p == MAP_FAILED) return -1;
    cgi_trace_chunk *c = p;
    if (me->c) {
        /* The one it leaves: how many events, and which chunk follows. */
        atomic_store_explicit(&me->c->events, w - atomic_load_explicit(&me->c->seq, memory_order_relaxed),
                              memory_order_relaxed);
        atomic_store_explicit(&me->c->next, (uint64_t)off, memory_order_release);
        munmap(me->c, CGI_TRACE_CHUNK_BYTES);
    } else {
        me->oldest = off;
    }
    atomic_store_explicit(&c->used, 0, memory_order_relaxed);
    atomic_store_explicit(&c->events, 0, memory_order_relaxed);
    atomic_store_explicit(&c->next, 0, memory_order_relaxed);
    atomic_store_explicit(&c->seq, w, memory_order_relaxed);
    c->thread = me->index;
    atomic_store_explicit(&c->magic, CGI_TRACE_CHUNK_MAGIC, memory_order_release);
    me->c = c;
    me->off = off;
    me->pos = (char *)(c + 1);
    me->limit = (char *)c + taken;
    me->end = (char *)c + CGI_TRACE_CHUNK_BYTES;
    cgi_trace_name(me->t);
    atomic_store_explicit(&me->t->ready, 1, memory_order_release);
    return 0;
}

/* Under a latest-events bound with no chunk left to claim: the thread's
 * oldest chunk becomes its newest, its events left out (counted). */
static int cgi_trace_reuse(cgi_trace_slot *me, uint64_t w)
{
    cgi_trace_chunk head;
    if (me->oldest == me->off) {
        /* Its only chunk: started again. */
        cgi_trace_chunk *c = me->c;
        uint64_t n = w - atomic_load_explicit(&c->seq, memory_order_relaxed);
        atomic_fetch_add_explicit(&me->t->left_out, n, memory_order_relaxed);
        atomic_store_explicit(&c->used, 0, memory_order_release);
        atomic_store_explicit(&c->seq, w, memory_order_relaxed);
        me->pos = (char *)(c + 1);
        return 0;
    }
    if (pread(cgi_trace_fd, &head, sizeof head, me->oldest) != (ssize_t)sizeof head) return -1;
    off_t off = me->oldest, next = (off_t)atomic_load_explicit(&head.next, memory_order_relaxed);
    uint64_t n = atomic_load_explicit(&head.events, memory_order_relaxed);
    atomic_fetch_add_explicit(&me->t->left_out, n, memory_order_relaxed);
    /* Marked unused first: a reader never sees its old events under a new number. */
    uint32_t none = 0;
    if (pwrite(cgi_trace_fd, &none, sizeof none, off) != (ssize_t)sizeof none) return -1;
    if (cgi_trace_enter_chunk(me, off, CGI_TRACE_CHUNK_BYTES, w) != 0) return -1;
    me->oldest = next ? next : off;
    return 0;
}

/* The next chunk for the thread: a new one at the file's end, or under a
 * bound, its oldest again (latest events) or none (first events: the
 * thread keeps no more). Nonzero: none. */
static int cgi_trace_next_chunk(cgi_trace_slot *me, uint64_t w)
{
    cgi_trace_header *h = cgi_trace_h;
    uint64_t k = atomic_fetch_add_explicit(&h->nchunks, 1, memory_order_relaxed);
    if (h->max_chunks && k >= h->max_chunks && me->c) {
        atomic_fetch_sub_explicit(&h->nchunks, 1, memory_order_relaxed);
        return h->keep == CGI_TRACE_KEEP_FIRST ? -1 : cgi_trace_reuse(me, w);
    }
    off_t off = (off_t)CGI_TRACE_CHUNK_OFFSET(k);
    if (cgi_trace_reserve(cgi_trace_fd, off, CGI_TRACE_STEP_BYTES) != 0) return -1;
    return cgi_trace_enter_chunk(me, off, CGI_TRACE_STEP_BYTES, w);
}

/* Room for an event of up to `need` bytes at me->pos: the chunk's next
 * step taken, or the next chunk. Nonzero: the event is left out (counted). */
__attribute__((noinline, cold)) static int cgi_trace_room(cgi_trace_slot *me, size_t need)
{
    if (me->dead) return -1;
    uint64_t w = atomic_load_explicit(&me->t->written, memory_order_relaxed);
    if (me->c && me->pos + need <= me->end) {
        off_t at = me->off + (off_t)(me->limit - (char *)me->c);
        if (cgi_trace_reserve(cgi_trace_fd, at, CGI_TRACE_STEP_BYTES) == 0) {
            me->limit += CGI_TRACE_STEP_BYTES;
            return 0;
        }
    } else if (cgi_trace_next_chunk(me, w) == 0) {
        return 0;
    }
    me->dead = 1;
    me->limit = me->pos; /* every later event comes here, and is counted */
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

/* A value of `size` bytes at p, as a word. */
static inline uint64_t cgi_trace_word(const void *p, unsigned size)
{
    switch (size) {
    case 1: return *(const uint8_t *)p;
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case 8: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
    return 0;
}

/* The outputs and strings of an event whose arguments are in out[first..]
 * (cgi_trace_args), the words after them from out[n]: `outs` and `strs`
 * have a bit for each such argument, `errs` for each output that is a
 * result code (errcode_ret). An output is read where the call succeeded
 * (an errcode_ret it returned is 0) and it is not NULL: the driver wrote
 * it then; an errcode_ret whenever it is not NULL (the call writes it
 * either way). Strings likewise, where it succeeded. Returns the words
 * then in out. */
__attribute__((noinline)) static unsigned cgi_trace_args_more(uint64_t *out, unsigned n, unsigned first,
                                                              const cg_args *a, uint32_t outs, uint32_t errs,
                                                              uint32_t strs, int err, uint32_t *flags)
{
    int ok = err == 0;
    for (uint32_t m = errs; m; m &= m - 1) {
        unsigned i = (unsigned)__builtin_ctz(m);
        uint64_t p = out[first + i];
        if (p) ok &= cgi_trace_word((const void *)(uintptr_t)p, a->arg[i].out_size) == 0;
    }
    unsigned nouts = 0;
    for (uint32_t m = outs; m && n < CGI_TRACE_WORDS_MAX && nouts < 16; m &= m - 1, nouts++) {
        unsigned i = (unsigned)__builtin_ctz(m);
        const void *p = (const void *)(uintptr_t)out[first + i];
        int read = p && (ok || ((errs >> i) & 1));
        out[n++] = read ? cgi_trace_word(p, a->arg[i].out_size) : 0;
        if (read) *flags |= 1u << (16 + nouts);
    }
    /* Strings only where the call succeeded: the driver read them then (a
     * failed call may have refused a bad pointer before reading it). */
    if (strs && !ok) *flags |= CGI_EV_NO_STRS;
    for (uint32_t m = ok ? strs : 0; m; m &= m - 1) {
        const char *str = (const char *)(uintptr_t)out[first + (unsigned)__builtin_ctz(m)];
        if (!str) continue;
        unsigned room = (CGI_TRACE_WORDS_MAX - n) * 8u;
        if (room > CGI_TRACE_STR_MAX) room = CGI_TRACE_STR_MAX;
        if (room == 0) {
            *flags |= CGI_EV_STR_CUT;
            break;
        }
        char *o = (char *)(out + n);
        unsigned k = 0;
        while (k + 1 < room && str[k])
            o[k] = str[k], k++;
        if (str[k]) *flags |= CGI_EV_STR_CUT;
        o[k++] = '\0';
        while (k % 8)
            o[k++] = '\0';
        n += k / 8;
    }
    return n;
}

/* A frame member of `size` bytes (1 to 8) at p, as a word. The frame is
 * the wrapper's struct (cgl_fr_NAME): 8 bytes are read and the rest masked
 * off, but for the last member (which may end the struct) and under
 * AddressSanitizer. */
#if defined(__SANITIZE_ADDRESS__)
#define CGI_TRACE_MEMBER(p, size, last) cgi_trace_word((p), (size))
#else
#define CGI_TRACE_MEMBER(p, size, last) ((last) ? cgi_trace_word((p), (size)) : cgi_trace_masked((p), (size)))
#endif
static inline uint64_t cgi_trace_masked(const void *p, unsigned size)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v & (~(uint64_t)0 >> (64u - 8u * size));
}

/* The call's arguments as words at out (layout: trace_file.h), read from
 * its frame after the call, in one pass over the site's table. A call
 * that returns its result code has its outputs read in the pass (where it
 * succeeded); another's (an errcode_ret says whether it did) and strings
 * are read out of line. Returns the words. */
static inline unsigned cgi_trace_args(uint64_t *out, const cg_args *a, const char *frame, int err, uint32_t *flags)
{
    unsigned n = 0;
    /* The result is the frame's last member: read by its size. */
    if (a->ret_size) out[n++] = cgi_trace_word(frame + a->ret_offset, a->ret_size);
    unsigned first = n;
    uint32_t nargs = a->nargs < CGI_TRACE_WORDS_MAX / 2 ? a->nargs : CGI_TRACE_WORDS_MAX / 2;
    unsigned o = first + nargs, nouts = 0;
    int inline_outs = a->ret_kind == CG_ARG_RESULT;
    uint32_t outs = 0, errs = 0, strs = 0;
    for (uint32_t i = 0; i < nargs; i++) {
        const cg_arg *g = &a->arg[i];
        uint64_t v = CGI_TRACE_MEMBER(frame + g->offset, g->size, !a->ret_size && i + 1 == a->nargs);
        out[first + i] = v;
        if (__builtin_expect(g->kind >= CG_ARG_STR, 0)) {
            if (g->kind == CG_ARG_OUT && inline_outs) {
                int read = v && (err == 0 || g->out_kind == CG_ARG_RESULT);
                out[o++] = read ? cgi_trace_word((const void *)(uintptr_t)v, g->out_size) : 0;
                *flags |= (uint32_t)read << (16 + nouts++);
            } else {
                outs |= (uint32_t)(g->kind == CG_ARG_OUT) << i;
                errs |= (uint32_t)(g->kind == CG_ARG_OUT && g->out_kind == CG_ARG_RESULT) << i;
                strs |= (uint32_t)(g->kind == CG_ARG_STR) << i;
            }
        }
    }
    return outs | strs ? cgi_trace_args_more(out, o, first, a, outs, errs, strs, err, flags) : o;
}

/* Stores one event at the thread's me->pos (room made) and publishes it. */
static inline void cgi_trace_put(cgi_trace_slot *me, cg_counters *c, uint64_t t0, uint64_t call_ns, uint64_t wait_ns,
                                 uint32_t flags, const uint64_t *words, unsigned nwords)
{
    cgi_trace_event *e = (cgi_trace_event *)me->pos;
    size_t r = (size_t)((const char *)c - (const char *)cgi_stats->r) / sizeof(cgi_stats_record);
    atomic_store_explicit(&e->t0, t0, memory_order_relaxed);
    atomic_store_explicit(&e->call_ns, call_ns, memory_order_relaxed);
    atomic_store_explicit(&e->wait_ns, wait_ns, memory_order_relaxed);
    atomic_store_explicit(&e->rec, r < CGI_STATS_MAX_RECORDS ? (uint32_t)r : CGI_EV_NO_RECORD, memory_order_relaxed);
    atomic_store_explicit(&e->flags, flags | (nwords << 8), memory_order_relaxed);
    if (words) memcpy(e + 1, words, (size_t)nwords * 8u); /* else already in place */
    me->pos += sizeof *e + (size_t)nwords * 8u;
    atomic_store_explicit(&me->c->used, (uint64_t)(me->pos - (char *)(me->c + 1)), memory_order_release);
    uint64_t w = atomic_load_explicit(&me->t->written, memory_order_relaxed);
    atomic_store_explicit(&me->t->written, w + 1, memory_order_release);
}

static inline uint32_t cgi_trace_flags(uint64_t call_ns, uint64_t wait_ns, int err, int held)
{
    uint64_t limit = atomic_load_explicit(&cgi_cfg.stall_ns, memory_order_relaxed);
    return (err ? CGI_EV_ERROR : 0) | (held ? CGI_EV_HELD : 0) | (held && call_ns >= limit ? CGI_EV_CALL_STALL : 0) |
           (held && wait_ns >= limit ? CGI_EV_WAIT_STALL : 0);
}

/* Everything but the common case: text lines, a thread's first event, a
 * chunk's next step or the next chunk, a thread that keeps no more. These
 * make system calls (fprintf, the trace file), and the counted paths
 * tail-call cgi_trace_call after the real call: the program's errno is
 * kept here. */
__attribute__((noinline)) static int cgi_trace_call_slow(cg_counters *c, uint64_t t0, uint64_t call_ns,
                                                         uint64_t wait_ns, int err, const uint64_t *words,
                                                         unsigned nwords, uint32_t flags)
{
    int saved = errno;
    int on = atomic_load_explicit(&cgi_cfg.trace_on, memory_order_acquire);
    if (on & CGI_TRACE_LINES) cgi_trace_line(c, call_ns, wait_ns, err);
    cgi_trace_slot *me = cgi_trace_me;
    if ((on & CGI_TRACE_TIMELINE) && !me && !(me = cgi_trace_me = cgi_trace_claim())) {
        if (cgi_trace_h) atomic_fetch_add_explicit(&cgi_trace_h->lost, 1, memory_order_relaxed);
    } else if (on & CGI_TRACE_TIMELINE) {
        size_t need = sizeof(cgi_trace_event) + (size_t)nwords * 8u;
        if (me->pos + need <= me->limit || cgi_trace_room(me, need) == 0) {
            cgi_trace_put(me, c, t0, call_ns, wait_ns, flags, words, nwords);
        } else {
            /* Left out: counted as its thread's, written by it alone. */
            uint64_t w = atomic_load_explicit(&me->t->written, memory_order_relaxed);
            atomic_store_explicit(&me->t->left_out, atomic_load_explicit(&me->t->left_out, memory_order_relaxed) + 1,
                                  memory_order_relaxed);
            atomic_store_explicit(&me->t->written, w + 1, memory_order_release);
        }
    }
    errno = saved;
    return 0;
}

/* The common case calls nothing, so it saves no registers. */
int cgi_trace_call(cg_counters *c, uint64_t t0, uint64_t call_ns, uint64_t wait_ns, int err, int held)
{
    int on = atomic_load_explicit(&cgi_cfg.trace_on, memory_order_relaxed);
    cgi_trace_slot *me = cgi_trace_me;
    if (__builtin_expect(on != CGI_TRACE_TIMELINE || !me || me->pos + sizeof(cgi_trace_event) > me->limit, 0))
        return cgi_trace_call_slow(c, t0, call_ns, wait_ns, err, NULL, 0, cgi_trace_flags(call_ns, wait_ns, err, held));
    cgi_trace_put(me, c, t0, call_ns, wait_ns, cgi_trace_flags(call_ns, wait_ns, err, held), NULL, 0);
    return 0;
}

/* cgi_trace_call_frame's event when the chunk may lack room (or the
 * timeline is off, or the thread has no chunk yet): its words made apart. */
__attribute__((noinline)) static int cgi_trace_frame_slow(const cg_site *s, const cg_args *a, const void *frame,
                                                          uint64_t t0, uint64_t call_ns, uint64_t wait_ns, int err,
                                                          uint32_t flags)
{
    uint64_t words[CGI_TRACE_WORDS_MAX];
    unsigned n = cgi_trace_args(words, a, frame, err, &flags);
    return cgi_trace_call_slow(s->ctr, t0, call_ns, wait_ns, err, words, n, flags);
}

/* The event of a call made with its frame (cg_call), with the call's
 * arguments where its site has them (layer.h, cg_args) and they are on:
 * written in place when the chunk has room for the largest event. */
int cgi_trace_call_frame(const cg_site *s, const void *frame, uint64_t t0, uint64_t call_ns, uint64_t wait_ns, int err,
                         int held)
{
    const cg_args *a = s->args;
    if (!a || !frame || !atomic_load_explicit(&cgi_trace_args_on, memory_order_relaxed))
        return cgi_trace_call(s->ctr, t0, call_ns, wait_ns, err, held);
    int on = atomic_load_explicit(&cgi_cfg.trace_on, memory_order_relaxed);
    cgi_trace_slot *me = cgi_trace_me;
    uint32_t flags = CGI_EV_ARGS | cgi_trace_flags(call_ns, wait_ns, err, held);
    if (__builtin_expect(on != CGI_TRACE_TIMELINE || !me || me->pos + CGI_TRACE_EVENT_MAX > me->limit, 0))
        return cgi_trace_frame_slow(s, a, frame, t0, call_ns, wait_ns, err, flags);
    cgi_trace_event *e = (cgi_trace_event *)me->pos;
    unsigned n = cgi_trace_args((uint64_t *)(e + 1), a, frame, err, &flags);
    cgi_trace_put(me, s->ctr, t0, call_ns, wait_ns, flags, NULL, n);
    return 0;
}

int cgi_trace_words(cg_counters *c, uint64_t t0, uint64_t call_ns, uint32_t flags, const uint64_t *w, unsigned n)
{
    flags = CGI_EV_ARGS | (flags & ~(uint32_t)0xffff) |
            cgi_trace_flags(call_ns, 0, flags & CGI_EV_ERROR, flags & CGI_EV_HELD);
    if (n > CGI_TRACE_WORDS_MAX) n = CGI_TRACE_WORDS_MAX;
    int on = atomic_load_explicit(&cgi_cfg.trace_on, memory_order_relaxed);
    cgi_trace_slot *me = cgi_trace_me;
    if (__builtin_expect(on != CGI_TRACE_TIMELINE || !me || me->pos + sizeof(cgi_trace_event) + n * 8u > me->limit, 0))
        return cgi_trace_call_slow(c, t0, call_ns, 0, flags & CGI_EV_ERROR, w, n, flags);
    cgi_trace_put(me, c, t0, call_ns, 0, flags, w, n);
    return 0;
}

int cgi_trace_words_code(const cg_args *a, cg_counters *c, uint64_t t0, uint64_t call_ns, uint32_t flags,
                         const uint64_t *w, unsigned n)
{
    uint64_t words[CGI_TRACE_WORDS_MAX];
    const uint64_t *use = w; /* copied only when an output is read into it */
    if (n > CGI_TRACE_WORDS_MAX) n = CGI_TRACE_WORDS_MAX;
    /* The outputs, after the arguments in their order (the layer left them 0): read where the code is a
     * state (no error) or the output is a result code (an errcode_ret), as cgi_trace_args reads them. */
    unsigned first = a && a->ret_size ? 1 : 0, nargs = a ? a->nargs : 0, k = 0;
    if (nargs > CGI_TRACE_WORDS_MAX / 2) nargs = CGI_TRACE_WORDS_MAX / 2;
    unsigned o = first + nargs;
    for (unsigned i = 0; a && a->ret_kind == CG_ARG_RESULT && i < nargs && o < n && k < 16; i++) {
        const cg_arg *g = &a->arg[i];
        if (g->kind != CG_ARG_OUT) continue;
        const void *p = (const void *)(uintptr_t)w[first + i];
        if (p && (!(flags & CGI_EV_ERROR) || g->out_kind == CG_ARG_RESULT)) {
            if (use == w) use = memcpy(words, w, (size_t)n * 8u);
            words[o] = cgi_trace_word(p, g->out_size);
            flags |= 1u << (16 + k);
        }
        o++, k++;
    }
    return cgi_trace_words(c, t0, call_ns, flags, use, n);
}

int cgi_trace_set_max(const char *value)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    double unit = 1;
    switch (*end) {
    case 'k':
    case 'K': unit = 1024.0, end++; break;
    case 'm':
    case 'M': unit = 1024.0 * 1024, end++; break;
    case 'g':
    case 'G': unit = 1024.0 * 1024 * 1024, end++; break;
    case 't':
    case 'T': unit = 1024.0 * 1024 * 1024 * 1024, end++; break;
    }
    if (*end == 'i' && unit > 1) end++;
    if ((*end == 'b' || *end == 'B') && unit >= 1) end++;
    uint32_t keep = CGI_TRACE_KEEP_LATEST;
    if (*end == ':' && strcmp(end + 1, "first") == 0)
        keep = CGI_TRACE_KEEP_FIRST, end += strlen(end);
    else if (*end == ':' && strcmp(end + 1, "latest") == 0)
        end += strlen(end);
    if (errno || end == value || *end || !(v > 0) || v * unit > 1e18)
        return cgi_fail(CG_EINVAL, "'%s': expected a size such as 500M or 2G, then :latest (the default) or :first",
                        value);
    uint64_t chunks = (uint64_t)(v * unit) / CGI_TRACE_CHUNK_BYTES;
    pthread_mutex_lock(&cgi_trace_lock);
    cgi_trace_max_chunks = chunks ? chunks : 1;
    cgi_trace_keep = keep;
    pthread_mutex_unlock(&cgi_trace_lock);
    return CG_OK;
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
    v->fd = -1;
    pthread_mutex_lock(&cgi_trace_lock);
    v->h = cgi_trace_h;
    if (v->h) {
        v->threads = (const cgi_trace_thread *)(v->h + 1);
        v->fd = cgi_trace_fd;
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
        if (cgi_trace_slots[i].c) munmap(cgi_trace_slots[i].c, CGI_TRACE_CHUNK_BYTES);
    memset(cgi_trace_slots, 0, sizeof cgi_trace_slots);
    munmap(cgi_trace_h, CGI_TRACE_DATA_OFFSET);
    cgi_trace_h = NULL;
    if (cgi_trace_fd >= 0) close(cgi_trace_fd);
    cgi_trace_fd = -1;
    cgi_trace_failed = 0;
}
