/* The trace file: the layout of one process's rings (trace.c records into
 * it; how and when: trace.h; src/report/trace_read.c reads it). */
#ifndef CGI_TRACE_FILE_H
#define CGI_TRACE_FILE_H

#include "common.h"

#define CGI_TRACE_MAGIC "CGTRACE"
/* 2: the clock pair, the boot, the time namespace and the host in the
 *    header (a job's traces from several hosts are aligned by them).
 * 3: no rings: each thread's events go into chunks appended to the file
 *    as they fill (nothing overwritten unless a size bound says so), and an
 *    event carries its call's arguments and result after its head. */
#define CGI_TRACE_VERSION 3
#define CGI_TRACE_MAX_THREADS 512u           /* per process; later threads' events are dropped and counted */
#define CGI_TRACE_CHUNK_BYTES (256u * 1024u) /* a thread's events go into one chunk at a time */
#define CGI_TRACE_STEP_BYTES (64u * 1024u)   /* a chunk's space is taken a step at a time as it fills */
#define CGI_TRACE_WORDS_MAX 32u              /* an event's argument words at most */
#define CGI_TRACE_STR_MAX 64u                /* a string argument's bytes kept, its NUL included */

/* What cgi_cfg.trace_on holds. */
enum { CGI_TRACE_LINES = 1, CGI_TRACE_TIMELINE = 2 };

/* Event flags. Bits 8-15: the argument words after the head; 16-31: which
 * outputs (CG_ARG_OUT, in the site's order) were read after the call. */
enum {
    CGI_EV_ERROR = 1,
    CGI_EV_HELD = 2,
    CGI_EV_CALL_STALL = 4,
    CGI_EV_WAIT_STALL = 8,
    CGI_EV_ARGS = 16,    /* the words are the site's arguments (cg_args), in the layout cgi_trace_args writes */
    CGI_EV_STR_CUT = 32, /* a string argument was longer than kept */
    CGI_EV_NO_STRS = 64  /* the call failed: its strings were not read (their pointers are shown) */
};
#define CGI_EV_WORDS(flags) (((flags) >> 8) & 0xffu)
#define CGI_EV_OUTS(flags) ((flags) >> 16)
#define CGI_EV_NO_RECORD 0xffffffffu

/* One guarded call's head, followed by CGI_EV_WORDS(flags) 8-byte words:
 * with CGI_EV_ARGS, the result (when the site's cg_args has ret_size), one
 * word per argument (the pointer itself for an output), one word per
 * output (the value it pointed to after the call, where its bit in
 * CGI_EV_OUTS is set), then each string argument's bytes, NUL-terminated,
 * padded to a word. Fields are relaxed atomics only because a reader may
 * read a chunk while its thread still records. */
typedef struct cgi_trace_event {
    _Atomic uint64_t t0;      /* ticks (the header's clock) when the call entered the driver */
    _Atomic uint64_t call_ns; /* time in the driver */
    _Atomic uint64_t wait_ns; /* lock wait, which ended at t0 */
    _Atomic uint32_t rec;     /* statistics record of the site (names, domain) */
    _Atomic uint32_t flags;   /* CGI_EV_* */
} cgi_trace_event;

/* One traced thread. Its events kept are written - left_out. */
typedef struct cgi_trace_thread {
    _Atomic uint64_t written; /* events ever recorded (release-stored after each event) */
    int32_t tid;
    _Atomic uint32_t ready; /* 1 once the thread has its first chunk */
    /* The thread's name (16 bytes, NUL-padded) as prctl(PR_GET_NAME) said
     * at its first event and at each new chunk: words, so a reader may
     * read it while the thread renames (cgi_trace_thread_name). */
    _Atomic uint64_t name[2];
    _Atomic uint64_t left_out; /* events not kept: a size bound's (--trace-max), or a full file system's */
    char pad[24];
} cgi_trace_thread;

/* The head of a chunk (CGI_TRACE_CHUNK_BYTES at CGI_TRACE_CHUNK_OFFSET(k)):
 * whose events follow it and from which of the thread's events. */
#define CGI_TRACE_CHUNK_MAGIC 0x4b435443u /* "CTCK" */
typedef struct cgi_trace_chunk {
    _Atomic uint32_t magic;  /* CGI_TRACE_CHUNK_MAGIC once the chunk is in use */
    uint32_t thread;         /* index in the thread table */
    _Atomic uint64_t seq;    /* the thread's number of the chunk's first event */
    _Atomic uint64_t used;   /* bytes of events after the head (release-stored after each event) */
    _Atomic uint64_t events; /* events in it, stored when its thread moves on */
    _Atomic uint64_t next;   /* file offset of the thread's next chunk, 0 while none */
    char pad[24];
} cgi_trace_chunk;

/* How a size bound (--trace-max) keeps events: the latest, or the first. */
enum { CGI_TRACE_KEEP_LATEST = 0, CGI_TRACE_KEEP_FIRST = 1 };

typedef struct cgi_trace_header {
    char magic[8];
    uint32_t version;
    uint32_t chunk_bytes; /* CGI_TRACE_CHUNK_BYTES */
    uint32_t max_threads;
    _Atomic uint32_t nthreads;
    int32_t pid;
    uint32_t keep;                /* CGI_TRACE_KEEP_* */
    uint64_t stats_start_unix_ns; /* the statistics header's start_unix_ns: pairs this file with its process */
    _Atomic uint64_t lost;        /* events of threads past max_threads, or whose chunk could not be made */
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
    uint64_t time_ns;         /* the inode of /proc/self/ns/time; CGI_TRACE_NO_TIMENS: the kernel has none */
    char boot_id[40];         /* /proc/sys/kernel/random/boot_id, NUL-terminated */
    char host[72];            /* gethostname() (64 bytes at most) */
    _Atomic uint64_t nchunks; /* chunks claimed in the file */
    uint64_t max_chunks;      /* the size bound in chunks; 0: none */
    char pad[4096 - 8 - 4 * 6 - 16 - 32 - 24 - 8 - 40 - 72 - 16];
} cgi_trace_header;

/* The file: header, thread table, then the chunks, in the order claimed. */
#define CGI_TRACE_TABLE_BYTES ((size_t)CGI_TRACE_MAX_THREADS * sizeof(cgi_trace_thread))
#define CGI_TRACE_DATA_OFFSET (sizeof(cgi_trace_header) + CGI_TRACE_TABLE_BYTES)
#define CGI_TRACE_CHUNK_OFFSET(k) (CGI_TRACE_DATA_OFFSET + (size_t)(k)*CGI_TRACE_CHUNK_BYTES)

/* A process's trace: its header and thread table, and the file the chunks
 * are read from. NULL header: none. */
typedef struct cgi_trace_view {
    const cgi_trace_header *h;
    const cgi_trace_thread *threads;
    int fd; /* the trace file (read by pread: a file cut short is a short read, not SIGBUS); -1: none */
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
