/* The trace file: the layout of one process's rings (trace.c records into
 * it; how and when: trace.h; src/report/trace_read.c reads it). */
#ifndef CGI_TRACE_FILE_H
#define CGI_TRACE_FILE_H

#include "common.h"

#define CGI_TRACE_MAGIC "CGTRACE"
/* 2: the clock pair, the boot, the time namespace and the host in the
 *    header (a job's traces from several hosts are aligned by them). */
#define CGI_TRACE_VERSION 2
#define CGI_TRACE_EVENTS 65536u    /* per thread, a power of two */
#define CGI_TRACE_MAX_THREADS 512u /* per process; later threads' events are dropped and counted */

/* What cgi_cfg.trace_on holds. */
enum { CGI_TRACE_LINES = 1, CGI_TRACE_TIMELINE = 2 };

/* Event flags. */
enum { CGI_EV_ERROR = 1, CGI_EV_HELD = 2, CGI_EV_CALL_STALL = 4, CGI_EV_WAIT_STALL = 8 };
#define CGI_EV_NO_RECORD 0xffffffffu

/* One guarded call. Fields are relaxed atomics only because an exit()
 * writer may read a ring while its thread still records. */
typedef struct cgi_trace_event {
    _Atomic uint64_t t0;      /* ticks (the header's clock) when the call entered the driver */
    _Atomic uint64_t call_ns; /* time in the driver */
    _Atomic uint64_t wait_ns; /* lock wait, which ended at t0 */
    _Atomic uint32_t rec;     /* statistics record of the site (names, domain) */
    _Atomic uint32_t flags;   /* CGI_EV_* */
} cgi_trace_event;

/* One traced thread. The ring's valid events are the last
 * min(written, CGI_TRACE_EVENTS - 1) before `written` (the slot after them
 * may be half overwritten by a thread that died writing it). */
typedef struct cgi_trace_thread {
    _Atomic uint64_t written; /* events ever recorded (release-stored after each event) */
    int32_t tid;
    _Atomic uint32_t ready; /* 1 once the ring is in place */
    /* The thread's name (16 bytes, NUL-padded) as prctl(PR_GET_NAME) said
     * at its first event and at each wrap: words, so an exit() writer may
     * read it while the thread renames (cgi_trace_thread_name). */
    _Atomic uint64_t name[2];
    char pad[32];
} cgi_trace_thread;

typedef struct cgi_trace_header {
    char magic[8];
    uint32_t version;
    uint32_t events_per_thread;
    uint32_t max_threads;
    _Atomic uint32_t nthreads;
    int32_t pid;
    int32_t reserved;
    uint64_t stats_start_unix_ns; /* the statistics header's start_unix_ns: pairs this file with its process */
    _Atomic uint64_t lost;        /* events of threads past max_threads, or whose ring could not be made */
    /* The process's clock (clock.h) when the file was made: an event's t0
     * is in ticks; ns = mono0 + (t0 - tick0) * mult >> 32 when tsc, else
     * t0 is CLOCK_MONOTONIC ns (cgi_trace_ns). */
    uint32_t tsc;
    uint32_t reserved2;
    uint64_t tick0, mono0, mult;
    /* CLOCK_REALTIME and CLOCK_MONOTONIC read back to back when the file
     * was made (the closest of a few tries; gap_ns: the monotonic time
     * the reads took, so real_ns held at mono_ns within gap_ns / 2). The
     * events' monotonic times map onto the realtime of other hosts by it. */
    uint64_t pair_real_ns, pair_mono_ns;
    uint32_t pair_gap_ns, reserved3;
    /* Which CLOCK_MONOTONIC the events are in: processes of one boot and
     * one time namespace share it; "" / 0 where not known. */
    uint64_t time_ns; /* the inode of /proc/self/ns/time; CGI_TRACE_NO_TIMENS: the kernel has none */
    char boot_id[40]; /* /proc/sys/kernel/random/boot_id, NUL-terminated */
    char host[72];    /* gethostname() (64 bytes at most) */
    char pad[4096 - 8 - 4 * 6 - 16 - 32 - 24 - 8 - 40 - 72];
} cgi_trace_header;

/* The file: header, thread table, then each thread's ring. */
#define CGI_TRACE_TABLE_BYTES ((size_t)CGI_TRACE_MAX_THREADS * sizeof(cgi_trace_thread))
#define CGI_TRACE_RING_BYTES ((size_t)CGI_TRACE_EVENTS * sizeof(cgi_trace_event))
#define CGI_TRACE_RING_OFFSET(i) (sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES + (size_t)(i)*CGI_TRACE_RING_BYTES)

/* A process's rings, its own or read from a file. NULL header: none. */
typedef struct cgi_trace_view {
    const cgi_trace_header *h;
    const cgi_trace_thread *threads;
    const cgi_trace_event *ring[CGI_TRACE_MAX_THREADS]; /* NULL where a thread has none */
} cgi_trace_view;
/* A clock to turn ticks into CLOCK_MONOTONIC ns; the same one for every
 * process of a merged trace (the TSC is one counter for the whole host;
 * each process's calibration differs by a little, which would drift). */
typedef struct cgi_trace_clock {
    uint32_t tsc;
    uint64_t tick0, mono0, mult;
    uint64_t span_ns; /* mult made over this long (trace_clock.h); 0: the process's own, over about 1 ms */
} cgi_trace_clock;
#define CGI_TRACE_NO_TIMENS 1 /* no inode is 1: a kernel without time namespaces (before 5.6) */
static inline uint64_t cgi_trace_ns(const cgi_trace_clock *c, uint64_t ticks)
{
    if (!c->tsc) return ticks;
    __int128 d = (__int128)ticks - (__int128)c->tick0;
    __int128 ns = (__int128)c->mono0 + ((d * (__int128)c->mult) >> 32);
    return ns < 0 ? 0 : (uint64_t)ns;
}

#endif
