/* The statistics file's layout: one process's region, as the runtime
 * writes it (src/runtime/stats.c) and the report and the CLI read it. A
 * header page, fixed-size site records, the worst stalls, one slot per
 * thread saying which guarded call it is in, the thread-rule violations,
 * the quirks applied, the last hang report and the late calls. Data and inline readers
 * only: no function of any part is declared here. */
#ifndef CGI_STATS_FILE_H
#define CGI_STATS_FILE_H

#include "common.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define CGI_STATS_MAGIC "CGSTATS"
/* 2: the API name has CGI_API_NAME_MAX bytes (8 in version 1).
 * 3: the host and the clock in the header; stalls and thread slots after the records;
 *    `calls` counts a call when it enters, not when it returns. */
/* 4: thread-rule violations after the thread slots; their drops in the header. */
/* 5: records are 512 bytes: `states` counted apart from `errors`, the site's
 *    state codes and its first CGI_STATS_MAX_CODES result codes by name; the
 *    header's fatal signal (CALLGUARD_SIGNALS=record).
 * 6: the quirks applied (after the violations).
 * 7: records are 1024 bytes (and 2048 of them, not 4096): `calls` and `total_ns` of the counted paths
 *    go to one of CGI_SHARDS shards, each on its own cache line, chosen by
 *    the thread's slot; a site's figures are the record's plus its shards'
 *    (cgi_ctr_calls, cgi_ctr_total_ns). */
/* 8: the file is made at the first guarded call, not at start-up; the
 *    header's proc_start (the CLI tells an exec from a pid used again) and
 *    settled (the CLI has made the file of an ended process small).
 * 9: a quirk record says whether its fix was applied, and why not; the
 *    header counts the quirk records not kept.
 * 10: a record's counters end with two peaks: the most threads inside the
 *    driver call at once, and waiting for the site's lock at once.
 * 11: the header's rank, local rank and the launcher's variable that named
 *    them (launcher.h). */
/* 12: slots are 128 bytes (the in-flight call's sequence number, the
 *    watchdog's stall mark, the runtime held and the Python line); a shard
 *    also counts errors, states and the first CGI_STATS_MAX_CODES codes,
 *    written by one thread only; the header says how times were taken
 *    (sampled or exact) and the region ends with the last hang report. */
/* 13: a record's inline_state (the state code the wrapper counts itself,
 *    layer ABI 9), named in code[0] from the start; the layer that names
 *    its codes is kept in the process (stats.c), not in the record. */
/* 14: the host has 72 bytes: a name of HOST_NAME_MAX (64) bytes and its NUL
 *    (63 at most, and a 63- or 64-byte name was lost, in version 13). */
/* 15: the header names the APIs whose drivers were probed for quirks, so the
 *    report tells a quirk that did not match this run from one never checked. */
/* 16: a stall is 1024 bytes: the threads seen waiting for the runtime when
 *    it ended (-1: not known), the first Python frame outside the standard
 *    library when the located one is in it, and the file of the module
 *    being imported when the call was made by an import. */
/* 17: the hang page (every call in flight a second, kept unasked), the
 *    header's start on the monotonic clock and the job's world size. */
/* 18: a record's once_at: the call whose success opened a site serialized
 *    until its first success (scope once). */
/* 19: a hung call says how its Python line was read (py_via; its py_file
 *    has 276 bytes, not 280). */
/* 20: the hang page counts every call in flight at its look (in_flight), not
 *    only the CGI_HANG_MAX_CALLS it lists. */
/* 21: the late page after the hang page: the slowest calls that were in
 *    flight past the hang threshold and then returned. */
/* 22: the header's request for every Python thread's stack (threads.ask,
 *     threads.depth: `callguard status`) and the watchdog's answer (its
 *     head; the threads themselves in the threads area after the region,
 *     which the reader allocates on its first request). */
/* 23: slots are 192 bytes: the third line holds the arguments a blocking call
 *     waits on (layer ABI 11, CG_SLOT_TO_WAIT); a hung call keeps them by
 *     name, as text (nargs, arg). */
/* 24: a quirk record is 1792 bytes: `waiters`, the quirk's waits_behind. */
/* 25: a slot's first line holds the thread's run of plain counted calls of one site (last, from: calls
 *     not yet in its shard, cgi_slot_run_calls); `tid`, `waiting` and `peaked` moved to its third line. */
#define CGI_STATS_VERSION 25
/* Threads on one site write their counts into this many cache lines of its
 * record, not one (bench/bench_contention.c: one shared line made a call
 * with statistics 4-11 times dearer with 2-8 threads on the H200). */
#define CGI_SHARDS 8
/* 4096 of 512 bytes before version 7; 2048 of 1088 bytes since version 18 (2.3 MB):
 * the shipped layers' sites all together need about 1,050 rows. */
#define CGI_STATS_MAX_RECORDS 2048
/* Longest API name a layer may have, with its NUL. */
#define CGI_API_NAME_MAX 32
/* The worst stalls of a process are kept; the others are counted. */
#define CGI_STATS_MAX_STALLS 32
/* Threads that can be seen in flight at once; more are counted. */
#define CGI_STATS_MAX_SLOTS 1024
/* Distinct thread-rule violations kept (threads.c); more are counted. */
#define CGI_STATS_MAX_VIOLATIONS 64

/* Result codes kept by name per site; the others are counted, not named. */
#define CGI_STATS_MAX_CODES 4
/* Longest result code name kept, with its NUL (ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE is 46). */
#define CGI_CODE_NAME_MAX 48

/* Named in layer.h (a site points at its counters), defined here.
 * errors: results that are failures; states: results that report a state
 * (the policy's `states`, e.g. ZE_RESULT_NOT_READY). A success is neither.
 * inside, waiting: threads in the driver call, and waiting for the site's
 * domain lock, now and at most at once. Counted only for a site that is
 * blocking or serialized (call.c: the general path; short.c: a blocking site's
 * short path), where a compile, a wait or a lock dwarfs two atomic adds; a
 * peak of 0 there means not measured. */
/* The counters, one row each, X(NAME, SUMMED, SHARDED), in the order of
 * the fields of cg_counters (a layout: a new one goes last, with
 * CGI_STATS_VERSION + 1). NAME is the field and the report's JSON key;
 * SUMMED: a process's and a run's totals add it up (else they keep the
 * most); SHARDED: the counted paths add to the thread's shard too
 * (cgi_shard has the field). Expanded into cg_counters, cgi_counter(), the
 * report's totals (report/internal.h), its JSON writer and reader. */
#define CGI_COUNTERS(X)                                                                                                \
    X(calls, 1, 1)                                                                                                     \
    X(total_ns, 1, 1)                                                                                                  \
    X(errors, 1, 1)                                                                                                    \
    X(states, 1, 1)                                                                                                    \
    X(nested, 1, 0)                                                                                                    \
    X(max_ns, 0, 0)                                                                                                    \
    X(lock_wait_ns, 1, 0)                                                                                              \
    X(stalls, 1, 0)                                                                                                    \
    X(stall_ns, 1, 0)
enum {
#define CGI_COUNTER_ID(name, summed, sharded) CGI_COUNTER_##name,
    CGI_COUNTERS(CGI_COUNTER_ID)
#undef CGI_COUNTER_ID
        CGI_NCOUNTERS
};
typedef struct cg_counters {
#define CGI_COUNTER_FIELD(name, summed, sharded) _Atomic uint64_t name;
    CGI_COUNTERS(CGI_COUNTER_FIELD)
#undef CGI_COUNTER_FIELD
    cgi_peak inside, waiting;
} cg_counters;

/* One result code of a site other than success, claimed by the first call
 * that returns it: `set` goes 0 (free) -> 1 (being written) -> 2 (a failure)
 * or 3 (a state); the name is complete once `set` is 2 or 3. */
enum { CGI_CODE_FREE = 0, CGI_CODE_WRITING = 1, CGI_CODE_ERROR = 2, CGI_CODE_STATE = 3 };
typedef struct cgi_code {
    _Atomic uint32_t set;
    int32_t code;
    _Atomic uint64_t count;
    char name[CGI_CODE_NAME_MAX]; /* the layer's name of it, or its value in decimal */
} cgi_code;

/* One thread's share of a site's counts (a cache line): the thread of the
 * slot that owns it (cgi_slot.owned) is its only writer, with a plain load
 * and store (no locked instruction); threads past CGI_SHARDS add to the
 * record's own counters atomically. code[k] counts the record's code[k]. */
typedef struct cgi_shard {
    _Alignas(64) _Atomic uint64_t calls;
    _Atomic uint64_t total_ns, errors, states;
    _Atomic uint64_t code[CGI_STATS_MAX_CODES];
} cgi_shard;
/* A record's `uncounted`: its policy leaves its calls uncounted (`count = no`), and its first call went
 * through callguard all the same (it resolved the site): the report names only those called. */
enum { CGI_UNCOUNTED = 1, CGI_UNCOUNTED_CALLED = 2 };

typedef struct cgi_stats_record {
    char api[CGI_API_NAME_MAX];
    char name[CGI_NAME_MAX];
    char domain[CGI_DOMAIN_NAME_MAX]; /* "" when not serialized */
    uint8_t transition, scope, blocking, used;
    _Atomic uint32_t nstates; /* the site's state codes: state[0..nstates) */
    /* The state the wrapper counts itself (layer.h, cg_slot_state), as its
     * thunk returns it (CG_RESULT_ZERO for 0): code[0]'s while code[0] is
     * named and a state, else 0 (no call's code: success is tested first).
     * Each site of the record keeps a copy in its first line (cg_site.state). */
    _Atomic int32_t inline_state;
    uint8_t collective; /* 1: the layer's policy marks it collective (the report compares the ranks' counts) */
    uint8_t uncounted;  /* CGI_UNCOUNTED bits: left uncounted with statistics on (`count = no`), and called */
    uint8_t spare[2];
    cg_counters c;
    _Atomic int32_t state[CG_MAX_STATES];
    cgi_code code[CGI_STATS_MAX_CODES];
    /* Scope once: the number of the site's call whose success opened it
     * (once_base, the calls counted when it was closed, + the calls that
     * held its lock since, that one included: once_ran); 0 while it is
     * closed. The domain keeps its name once open. */
    _Atomic uint64_t once_at, once_base, once_ran;
/* once_at: opened before this process's first call (in the parent it forked from). */
#define CGI_ONCE_BEFORE UINT64_MAX
    /* The head is 576 bytes (512 before version 18), the shards start on a cache line. */
    char pad[576 - CGI_API_NAME_MAX - CGI_NAME_MAX - CGI_DOMAIN_NAME_MAX - 16 - sizeof(cg_counters) -
             4 * CG_MAX_STATES - CGI_STATS_MAX_CODES * sizeof(cgi_code) - 24];
    cgi_shard shard[CGI_SHARDS]; /* the counted paths' calls and total_ns, by thread */
} cgi_stats_record;
/* The wrapper's view of a shard (layer.h, cg_slot_state). */
_Static_assert(offsetof(cgi_shard, states) - offsetof(cgi_shard, calls) == CG_CALLS_TO_STATES, "CG_CALLS_TO_STATES");
_Static_assert(offsetof(cgi_shard, code) - offsetof(cgi_shard, calls) == CG_CALLS_TO_CODE0, "CG_CALLS_TO_CODE0");
/* From a site's counters (a record's `c`) to the shard at byte offset off
 * (a slot's shard_off). */
#define CGI_SHARD_BASE (offsetof(cgi_stats_record, shard) - offsetof(cgi_stats_record, c))
static inline cgi_shard *cgi_shard_at(cg_counters *c, uint32_t off)
{
    return (cgi_shard *)((char *)c + CGI_SHARD_BASE + off);
}
static inline const cgi_shard *cgi_shards_of(const cg_counters *c)
{
    return (const cgi_shard *)((const char *)c + CGI_SHARD_BASE);
}
/* A plain increment by the one thread that writes the counter. */
static inline void cgi_bump(_Atomic uint64_t *v, uint64_t n)
{
    atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + n, memory_order_relaxed);
}
/* A site's counts: its record's and its shards'. Relaxed: a report read
 * while calls go on is a moment's picture, as before. */
static inline uint64_t cgi_ctr_sum(const cg_counters *c, const _Atomic uint64_t *own, size_t field)
{
    uint64_t n = atomic_load_explicit(own, memory_order_relaxed);
    for (int i = 0; i < CGI_SHARDS; i++)
        n += atomic_load_explicit((const _Atomic uint64_t *)((const char *)&cgi_shards_of(c)[i] + field),
                                  memory_order_relaxed);
    return n;
}
static inline uint64_t cgi_ctr_calls(const cg_counters *c)
{
    return cgi_ctr_sum(c, &c->calls, offsetof(cgi_shard, calls));
}
static inline uint64_t cgi_ctr_total_ns(const cg_counters *c)
{
    return cgi_ctr_sum(c, &c->total_ns, offsetof(cgi_shard, total_ns));
}
static inline uint64_t cgi_ctr_errors(const cg_counters *c)
{
    return cgi_ctr_sum(c, &c->errors, offsetof(cgi_shard, errors));
}
static inline uint64_t cgi_ctr_states(const cg_counters *c)
{
    return cgi_ctr_sum(c, &c->states, offsetof(cgi_shard, states));
}
/* Counter k of a site (CGI_COUNTER_...): the record's and, where it is
 * sharded, its shards'. The sharded ones come first, in cgi_shard's order. */
_Static_assert(offsetof(cgi_shard, total_ns) - offsetof(cgi_shard, calls) == 8 * CGI_COUNTER_total_ns &&
                   offsetof(cgi_shard, errors) - offsetof(cgi_shard, calls) == 8 * CGI_COUNTER_errors &&
                   offsetof(cgi_shard, states) - offsetof(cgi_shard, calls) == 8 * CGI_COUNTER_states,
               "a sharded counter's place in cgi_shard is its place in CGI_COUNTERS");
static inline uint64_t cgi_counter(const cg_counters *c, unsigned k)
{
    static const size_t own[CGI_NCOUNTERS] = {
#define CGI_COUNTER_OWN(name, summed, sharded) offsetof(cg_counters, name),
        CGI_COUNTERS(CGI_COUNTER_OWN)
#undef CGI_COUNTER_OWN
    };
    static const unsigned char sharded[CGI_NCOUNTERS] = {
#define CGI_COUNTER_SHARDED(name, summed, sharded) sharded,
        CGI_COUNTERS(CGI_COUNTER_SHARDED)
#undef CGI_COUNTER_SHARDED
    };
    const _Atomic uint64_t *p = (const _Atomic uint64_t *)((const char *)c + own[k]);
    if (!sharded[k]) return atomic_load_explicit(p, memory_order_relaxed);
    return cgi_ctr_sum(c, p, offsetof(cgi_shard, calls) + k * sizeof(uint64_t));
}
/* How many calls returned a record's code[k]: the record's count and its shards'. */
static inline uint64_t cgi_code_count(const cgi_stats_record *r, unsigned k)
{
    return cgi_ctr_sum(&r->c, &r->code[k].count, offsetof(cgi_shard, code) + k * sizeof(uint64_t));
}
/* Zeroes a record's counters, shards and result codes' counts
 * (cg_reset_stats, a forked child); the codes keep their names. The
 * threads inside or waiting now stay counted: they leave later and take
 * themselves off (a forked child zeroes them: cgi_stats_after_fork_child). */
static inline void cgi_ctr_zero(cgi_stats_record *r)
{
    uint32_t inside = atomic_load(&r->c.inside.now), waiting = atomic_load(&r->c.waiting.now);
    memset(&r->c, 0, sizeof r->c);
    atomic_store(&r->c.inside.now, inside);
    atomic_store(&r->c.waiting.now, waiting);
    memset(r->shard, 0, sizeof r->shard);
    for (unsigned k = 0; k < CGI_STATS_MAX_CODES; k++)
        atomic_store(&r->code[k].count, 0);
}

enum { CGI_RANK_SET = 1, CGI_LOCAL_RANK_SET = 2 };

/* Bytes of the header's list of APIs probed for quirks, with its NUL. */
#define CGI_QUIRKS_PROBED_MAX 128

/* The header's timing: the watchdog samples the short paths' calls (the
 * general path still times its own), or every call reads the clock. */
enum { CGI_TIMING_SAMPLED = 0, CGI_TIMING_EXACT = 1 };

/* Every Python thread of a process, its name, OS thread id, the GIL held
 * and its stack, on request (docs/report.md, "Live: callguard status";
 * src/runtime/pystacks.c). Nothing is read while nobody asks: a reader
 * (`callguard status`, the owner of the file) allocates the threads area
 * (CGI_THREADS_OFF, CGI_THREADS_BYTES, after the region: posix_fallocate,
 * so the process never touches a page a full disk has not given), writes
 * `depth` and then a new `ask`; the process's watchdog, at its next tick
 * (1 ms, or 100 ms while idle), sees `ask` differ from the last it answered,
 * reads the threads from the interpreter's memory (pyread.h: no CPython
 * call, no fault, bounded) and writes the records into the area, the
 * head here, and `done` = `ask` last. `gen` is odd while it writes. */
enum {
    CGI_THREADS_OK = 0,          /* the threads are in the area (none: no Python thread) */
    CGI_THREADS_NO_PYTHON = 1,   /* no CPython in the process (or none found yet) */
    CGI_THREADS_NO_ACCESS = 2,   /* its memory could not be read (selfread.h: neither way open) */
    CGI_THREADS_CHANGED = 3,     /* the list of threads kept changing while read */
    CGI_THREADS_NO_ROOM = 4,     /* the area is not there (not allocated) or could not be written */
    CGI_THREADS_UNSUPPORTED = 5, /* a CPython whose layout the reader does not know */
};
typedef struct cgi_threads_answer {
    _Atomic uint32_t ask;   /* a reader's request: its number (0: none yet) */
    _Atomic uint32_t depth; /* the frames a thread it asked for (written before ask) */
    _Atomic uint32_t done;  /* the request the area answers now */
    _Atomic uint32_t gen;   /* odd while the watchdog writes the answer */
    int32_t result;         /* CGI_THREADS_* */
    uint32_t nthreads;      /* thread records in the area */
    uint32_t left_out;      /* threads not written: the area was full */
    uint32_t bytes;         /* of records, from CGI_THREADS_OFF */
    uint64_t at_ns;         /* when the answer was written, since start-up */
    uint64_t took_ns;       /* how long reading the threads took */
    char stdlib[200];       /* the standard library's folder (threading's), "" when not known */
} cgi_threads_answer;

enum { CGI_PROC_RUNNING = 0, CGI_PROC_EXITED = 1, CGI_PROC_SIGNALED = 2, CGI_PROC_EXECED = 3 };

typedef struct cgi_stats_header {
    char magic[8];
    uint32_t version;
    uint32_t max_records;
    _Atomic uint32_t nrecords;
    int32_t pid;
    int32_t ppid;
    _Atomic int32_t state;        /* CGI_PROC_* as the process itself saw it */
    int32_t status;               /* exit status or signal number */
    _Atomic int32_t fatal_signal; /* the fatal signal the hook recorded (CALLGUARD_SIGNALS=record); 0: none */
    uint64_t start_unix_ns;
    char command[2048]; /* argv joined by spaces */
    char host[72];      /* gethostname() at start (64 bytes at most): pids repeat across the nodes of one job */
    /* The clock of the slots' `entered`: ns = (ticks - tick0) * tick_mult >> 32
     * since start-up; tick_mult is 0 until the first timed call. */
    uint64_t tick0;
    _Atomic uint64_t tick_mult;
    _Atomic uint64_t stalls_dropped;     /* stalls not kept: the list held worse ones */
    _Atomic uint32_t threads_unslotted;  /* threads that found no free slot */
    _Atomic uint32_t signal_hook;        /* 1: the fatal-signal hook was installed in this process */
    uint64_t base;                       /* the region's address in the process: slots point into it */
    _Atomic uint64_t violations_dropped; /* thread-rule violations of kinds not kept: the list was full */
    _Atomic uint64_t handles_untracked;  /* checked calls on a handle the checker's table had no room for */
    uint64_t proc_start;                 /* /proc/PID/stat's starttime (clock ticks since boot; kept across exec) */
    uint32_t settled;                    /* 1: the process ended and the CLI made its file small (stats_settle.c) */
    _Atomic uint32_t timing;             /* how times were taken: CGI_TIMING_SAMPLED or CGI_TIMING_EXACT */
    _Atomic uint64_t quirks_dropped;     /* quirks that matched past the CGI_STATS_MAX_QUIRKS kept */
    /* The launcher's rank of the process and its rank on its host, read at
     * start-up (launcher.h); each only when its bit of rank_set is set
     * (CGI_RANK_SET, CGI_LOCAL_RANK_SET): a zeroed header has no rank. */
    uint32_t rank, local_rank, rank_set;
    char rank_from[32]; /* the launcher's variable that gave the rank; "" when none */
    /* The APIs whose drivers quirks.c probed and matched against the quirks
     * file, "cl,ze" (one that does not fit is left out: not known). */
    char quirks_probed[CGI_QUIRKS_PROBED_MAX];
    uint32_t world_size; /* the launcher's number of ranks; 0: not known */
    /* CLOCK_MONOTONIC at tick0: a reader on the same host turns its own
     * clock into the process's ns since start-up (callguard status). */
    uint64_t start_mono_ns;
    cgi_threads_answer threads; /* every Python thread's stack, on a reader's request */
    char pad[4096 - 8 - 4 * 8 - 8 - 2048 - 72 - 40 - 16 - 16 - 8 - 44 - CGI_QUIRKS_PROBED_MAX - 12 -
             sizeof(cgi_threads_answer)];
} cgi_stats_header;

/* One stall: a call or lock wait of at least the stall limit made while
 * holding the host runtime. `valid` is set last: a process that dies while
 * writing one leaves it out, not half of it. */
typedef struct cgi_stall {
    _Atomic uint32_t valid;
    int32_t tid;
    uint64_t ns; /* call_ns + wait_ns: how long the runtime was held */
    uint64_t call_ns, wait_ns;
    uint64_t at_ns; /* when the call entered, since start-up */
    char api[CGI_API_NAME_MAX];
    char name[CGI_NAME_MAX];
    char thread[16];   /* the thread's name */
    char runtime[16];  /* the adapter's name: "cpython" */
    char py_file[256]; /* where the call was made (import machinery skipped); "" when not known */
    char py_func[64];
    int32_t py_line;
    int32_t waiters;    /* other threads waiting for the runtime when it ended; -1: not known */
    int32_t from_line;  /* the first frame outside the standard library, when py_file is in it */
    char from_func[64]; /* "" when py_file is not in the standard library or none was found */
    char from_file[224];
    char import_file[224]; /* the module being imported, when an import made the call ("" if none) */
    char pad[1024 - 40 - CGI_API_NAME_MAX - CGI_NAME_MAX - 32 - 256 - 64 - 4 - 8 - 64 - 224 - 224];
} cgi_stall;

/* A thread's slot: claimed once per thread on its first timed call, given
 * back when the thread exits. `counters` is set while the thread is inside
 * a guarded call: a slot still inside one when the process is gone is a
 * call that never returned. The first cache line is what every counted
 * call touches: written by its thread on every call, by the watchdog only
 * to time a call in flight (`entered`) or mark a stall (`mark`); the
 * second is read by the watchdog (watchdog.c, hang.c) and written by its
 * thread only on rarer paths (hang reports, the runtime held). */
typedef struct cgi_slot {
    cg_counters *_Atomic counters; /* the site's, in this process's mapping (h.base); NULL: not in a call */
    _Atomic uint64_t seq;          /* guarded calls this thread entered: the number of the one in flight */
    _Atomic uint64_t mark;         /* seq of a call the watchdog found as long as a stall; 0: none (on the
                                    * line the wrapper writes: its leave reads it, and it is rarely written) */
    /* The thread's run of plain counted calls of one site (layer.h, cg_slot_enter): its record, in this
     * process's mapping, whose calls are those numbered past `from` (to `seq`), not yet in the thread's shard.
     * A site's calls are its record's, its shards' and the runs of the slots it is `last` of (cgi_stats_fold). */
    cg_counters *_Atomic last;
    _Atomic uint64_t from;
    _Atomic uint64_t entered; /* ticks (see the header's clock): exact where the call times itself
                               * (timed), else when the watchdog first saw it */
    uint32_t shard_off;       /* this thread's shard of every record: byte offset from shard[0] */
    uint32_t owned;           /* 1: that shard is this thread's alone (else it counts atomically) */
    uint32_t calls_off;       /* owned: from a record's counters to its shard's calls (the wrapper's cg_slot) */
    _Atomic uint32_t timed;   /* 1: the call in flight reads the clock itself (the watchdog does not sample it) */
    /* second line */
    _Atomic uint64_t held_seq;   /* seq of the last call entered holding the runtime (when known) */
    _Atomic uint64_t where_seq;  /* seq of the call whose Python line py_file, py_line hold */
    const char *_Atomic py_file; /* the file's name in the interpreter, alive while that call is */
    _Atomic int32_t py_line;
    char thread[16];
    int32_t py_lasti;         /* cgi_where_note's cache: the instruction py_line was computed for ... */
    void *py_code;            /* ... in this code object, which this thread holds a reference to, */
    const char *py_code_file; /* ... and its file name */
    /* third line: the arguments the call in flight waits on, stored by its
     * wrapper before the call (layer.h, cg_slot_wait); read by the watchdog */
    cg_slot_wait wait;
    _Atomic int32_t tid;      /* 0: free */
    _Atomic uint32_t waiting; /* 1: waiting for the site's domain lock */
    uint32_t peaked;          /* 1: the call in flight counts its site's peak inside (CGI_MODE_PEAKS_PY) */
    char pad2[4];
} cgi_slot;

/* The wrapper's view of a slot (layer.h, cg_slot): its plain counted call
 * writes these fields itself. */
_Static_assert(sizeof(cgi_slot) == 192, "a slot is three cache lines");
_Static_assert(offsetof(cgi_slot, wait) == CG_SLOT_TO_WAIT, "CG_SLOT_TO_WAIT");
_Static_assert(offsetof(cgi_slot, counters) == offsetof(cg_slot, counters), "cg_slot.counters");
_Static_assert(offsetof(cgi_slot, seq) == offsetof(cg_slot, seq), "cg_slot.seq");
_Static_assert(offsetof(cgi_slot, calls_off) == offsetof(cg_slot, calls_off), "cg_slot.calls_off");
_Static_assert(offsetof(cgi_slot, last) == offsetof(cg_slot, last), "cg_slot.last");
_Static_assert(offsetof(cgi_slot, from) == offsetof(cg_slot, from), "cg_slot.from");
_Static_assert(offsetof(cgi_slot, timed) == offsetof(cg_slot, cg_timed), "cg_slot.cg_timed");
_Static_assert(offsetof(cgi_slot, mark) == offsetof(cg_slot, mark), "cg_slot.mark");
_Static_assert(offsetof(cg_counters, inside) == CG_COUNTERS_TO_INSIDE, "CG_COUNTERS_TO_INSIDE");

/* Quirks a process can report (docs/quirks.md); more are counted, not kept. */
#define CGI_STATS_MAX_QUIRKS 16

/* A quirk of the quirks file that matched a driver of this process, its
 * fix applied or not (quirks.c). `valid` is set last, as for stalls. */
typedef struct cgi_quirk_rec {
    _Atomic uint32_t valid;
    uint32_t vendor;       /* the matched driver's PCI vendor id (0: not known) */
    uint32_t applied;      /* 1: its entry points serialized; 0: not_applied says why */
    char not_applied[252]; /* why the fix was not applied ("" when applied) */
    char api[CGI_API_NAME_MAX];
    char name[64]; /* the section's NAME */
    char domain[CGI_DOMAIN_NAME_MAX];
    char sites[256];  /* the entry points it serializes, comma-separated */
    char source[256]; /* the public URL */
    char why[256];
    char driver[128];  /* the matched driver's name, as its API gives it */
    char version[64];  /* the matched driver's version, as its API gives it */
    char library[128]; /* "" or what the library condition saw ("libigc.so.2 2.38.2", "... not loaded") */
    /* The entry points that wait behind the first of `sites` while it runs on another thread: a lock of
     * the driver's held across a wait (the quirk's waits_behind; src/common/behind.c); "" for none.
     * The record grew from 1536 bytes for it (version 24). */
    char waiters[256];
    char pad[1792 - 8 - 256 - CGI_API_NAME_MAX - 64 - CGI_DOMAIN_NAME_MAX - 256 * 4 - 128 - 64 - 128];
} cgi_quirk_rec;
/* One kind of thread-rule violation (threads.c): two entry points on one
 * handle from two threads, counted; the handle and threads of the first.
 * `valid` is set last. For an overlap, `name` is the call that found the
 * other one inside; for a sequence, `name` is the launch whose arguments
 * `other` (another thread's setting of an argument) changed, and
 * `set_name` is the launching thread's own earlier setting. */
typedef struct cgi_violation {
    _Atomic uint32_t valid;
    uint32_t kind; /* CGI_VIOLATION_* */
    _Atomic uint64_t count;
    uint64_t handle;
    uint64_t at_ns; /* the first, since start-up (CLOCK_MONOTONIC) */
    int32_t tid, other_tid;
    char api[CGI_API_NAME_MAX], other_api[CGI_API_NAME_MAX];
    char name[CGI_NAME_MAX], other[CGI_NAME_MAX], set_name[CGI_NAME_MAX];
    char param[32], other_param[32];
    char access[16], other_access[16]; /* a thread-rule key (common/names.h), or "holds" */
    char pad[512 - 40 - 2 * CGI_API_NAME_MAX - 3 * CGI_NAME_MAX - 64 - 32];
} cgi_violation;

enum { CGI_VIOLATION_OVERLAP = 1, CGI_VIOLATION_SEQUENCE = 2 };

/* The calls in flight at the last look of the watchdog that found one of
 * them in flight for the hang threshold (hang.c, docs/report.md "Hangs"):
 * CALLGUARD_HANG_MS, else 1 s. Written whether or not hang reports go to
 * stderr (`asked`), so another process can read it live (`seen_ns` says
 * how fresh it is) and the report keeps it when the process is killed.
 * `gen` is odd while the watchdog rewrites the page, even once it is whole. */
#define CGI_HANG_MAX_CALLS 30
/* Whether a call in flight holds its runtime (the GIL): noted at entry, or
 * read from the interpreter's memory by the watchdog (pyread.c). */
enum { CGI_HELD_NO = 0, CGI_HELD_YES = 1, CGI_HELD_UNKNOWN = 2 };
/* How a call's Python line was found: noted at entry or read with
 * process_vm_readv (the first way), or read with pread on /proc/self/mem
 * (src/runtime/selfread.h: where the first is refused or a seccomp filter
 * is present). */
enum { CGI_PY_VIA_FIRST = 0, CGI_PY_VIA_PROC_MEM = 1 };
/* One argument a call waits on, as text: `source` `0`, `comm` `MPI_COMM_WORLD`. */
typedef struct cgi_hang_arg {
    char name[32];
    char value[32];
} cgi_hang_arg;
typedef struct cgi_hang_call {
    int32_t tid;
    int32_t holder_tid; /* waiting: the thread in flight on a site of the same lock domain; 0: not known */
    uint32_t waiting;   /* 1: waits for the site's lock */
    uint32_t held;      /* CGI_HELD_*: holds the runtime (`runtime`) */
    uint64_t age_ns;    /* in flight for this long at at_ns */
    uint64_t seq;       /* the call's number in its thread's slot */
    int32_t py_line;
    uint32_t loader; /* 1: asleep on the dynamic loader's lock (glibc's, inside the driver call) */
    uint32_t py_via; /* CGI_PY_VIA_*: how py_file and py_line were found */
    char thread[16];
    char api[CGI_API_NAME_MAX];
    char name[CGI_NAME_MAX];
    char domain[CGI_DOMAIN_NAME_MAX];
    char runtime[16];  /* the process's runtime adapter ("cpython"); "" when none */
    char py_file[276]; /* "" when not known */
    char py_func[64];  /* "" when not known */
    uint32_t nargs;    /* the arguments it waits on, as its slot had them (wait_args): 0 when none or not known */
    uint32_t pad;
    cgi_hang_arg arg[CG_WAIT_ARGS_MAX];
} cgi_hang_call;
/* `name=value name=value` of the arguments a hung call waits on, into out
 * (size bytes); "" when it has none. The hang lines, the report's and
 * status's text. */
static inline void cgi_hang_args_text(const cgi_hang_call *e, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (uint32_t i = 0; i < e->nargs && i < CG_WAIT_ARGS_MAX && len < size; i++) {
        int k = snprintf(out + len, size - len, "%s%.*s=%.*s", i ? " " : "", (int)sizeof e->arg[i].name, e->arg[i].name,
                         (int)sizeof e->arg[i].value, e->arg[i].value);
        if (k < 0) break;
        len += (size_t)k;
    }
}
/* A thread in no guarded call asleep on the runtime's lock (CPython's GIL). */
#define CGI_HANG_MAX_WAITERS 8
typedef struct cgi_hang_waiter {
    int32_t tid;
    char thread[16];
} cgi_hang_waiter;
typedef struct cgi_hang_page {
    _Atomic uint32_t gen;
    uint32_t ncalls;
    _Atomic uint64_t reports; /* times the page was written (the hung calls changed) */
    uint64_t at_ns;           /* the last one, since start-up */
    uint64_t hang_ns;         /* the threshold then */
    uint32_t over;            /* 1: the calls reported returned since */
    uint32_t nwaiters;        /* threads in no guarded call found waiting for the runtime (the GIL) */
    _Atomic uint64_t seen_ns; /* the watchdog's last look at the calls, since start-up (it looks each ms) */
    uint32_t asked;           /* 1: CALLGUARD_HANG_MS was set: the page also went to stderr */
    uint32_t in_flight;       /* the calls in flight then, all of them: call[] has the first ncalls */
    cgi_hang_waiter waiter[CGI_HANG_MAX_WAITERS];
    char pad[512 - 56 - CGI_HANG_MAX_WAITERS * sizeof(cgi_hang_waiter)];
    cgi_hang_call call[CGI_HANG_MAX_CALLS];
} cgi_hang_page;

/* Calls that were in flight for the hang threshold and then returned
 * (hang.c, docs/report.md "Late calls"): the watchdog, at its first tick
 * after such a call left, copies the call as the hang page had it, with
 * how long it was in flight; the slowest CGI_LATE_MAX are kept, `count`
 * counts them all. Written by the watchdog, or by the exiting thread
 * while the watchdog does not tick (watchdog.c); `valid` is 0 while an
 * entry is rewritten, set last. */
#define CGI_LATE_MAX 8
typedef struct cgi_late_call {
    _Atomic uint32_t valid;
    uint32_t pad;
    uint64_t ns;        /* in flight this long: from its entry to the tick that found it returned (1 ms apart) */
    uint64_t ended_ns;  /* that tick, since start-up */
    cgi_hang_call call; /* as the hang page had it: thread, entry point, runtime held, Python line */
} cgi_late_call;
typedef struct cgi_late_page {
    _Atomic uint64_t count; /* late calls found, kept or not */
    uint64_t pad;
    cgi_late_call call[CGI_LATE_MAX];
} cgi_late_page;

typedef struct cgi_stats_region {
    cgi_stats_header h;
    cgi_stats_record r[CGI_STATS_MAX_RECORDS];
    cgi_stall stall[CGI_STATS_MAX_STALLS];
    cgi_slot slot[CGI_STATS_MAX_SLOTS];
    cgi_violation violation[CGI_STATS_MAX_VIOLATIONS];
    cgi_quirk_rec quirk[CGI_STATS_MAX_QUIRKS];
    cgi_hang_page hang;
    cgi_late_page late;
} cgi_stats_region;

/* The threads area: thread records, each a cgi_thread_rec and its frames,
 * from CGI_THREADS_OFF (a page after the region), written with pwrite by
 * the process's watchdog into space its reader allocated. */
#define CGI_THREADS_OFF ((sizeof(cgi_stats_region) + 4095) / 4096 * 4096)
#define CGI_THREADS_BYTES (512u * 1024)
/* Frames a thread at most (`callguard status --all`). */
#define CGI_THREADS_MAX_DEPTH 256
/* Where a thread's name comes from. */
enum { CGI_THREAD_NAME_NONE = 0, CGI_THREAD_NAME_THREADING = 1, CGI_THREAD_NAME_OS = 2 };
typedef struct cgi_thread_rec {
    uint32_t size;       /* bytes of the record and its frames: a multiple of 8 */
    int32_t tid;         /* the OS thread id; 0: not known */
    uint64_t ident;      /* its thread_id: threading's ident (pthread_self()) */
    int32_t gil;         /* 1: holds its interpreter's GIL, 0: does not, -1: not known */
    int32_t result;      /* its stack as read: a cgi_pyread_result (0: ok) */
    uint32_t nframes;    /* frames that follow, innermost first */
    uint32_t more;       /* 1: the stack goes on past them */
    int32_t user;        /* the user's own frame among them (the first outside the standard
                          * library and site-packages); -1: none found */
    uint32_t user_depth; /* its depth in the whole stack: past the depth asked, it is the last frame */
    uint32_t name_from;  /* CGI_THREAD_NAME_* */
    uint32_t pad0;
    char name[64]; /* threading's name of it, else the OS thread's */
} cgi_thread_rec;
/* A frame: its line (-1: none), then the file and the function, each
 * NUL-terminated, their lengths here without the NUL; zeros to a multiple of 8. */
typedef struct cgi_thread_frame {
    int32_t line;
    uint16_t file_len, func_len;
} cgi_thread_frame;

/* A process that could not keep its statistics file (full, read-only or
 * removed storage) adds one to this page, which `callguard run` keeps in its
 * own memory and names in CALLGUARD_STATS_LOST (/proc/PID/fd/N): counting
 * needs no disk and no reaping. After the run the CLI writes the page into
 * the directory's file CGI_STATS_LOST_FILE, which the report counts. */
typedef struct cgi_lost_page {
    char magic[8];
    _Atomic uint64_t count;
} cgi_lost_page;
#define CGI_LOST_MAGIC "CGLOST1"
#define CGI_STATS_LOST_FILE "lost"

/* The record at address `at` in the process that wrote region r (h.base): its counters' index, or -1. */
static inline int64_t cgi_record_at(const cgi_stats_region *r, const void *at)
{
    uint64_t off = (uint64_t)(uintptr_t)at - r->h.base;
    uint64_t first = offsetof(cgi_stats_region, r) + offsetof(cgi_stats_record, c);
    if (!at || off < first || (off - first) % sizeof(cgi_stats_record)) return -1;
    uint64_t k = (off - first) / sizeof(cgi_stats_record);
    return k < atomic_load(&r->h.nrecords) && k < CGI_STATS_MAX_RECORDS ? (int64_t)k : -1;
}

/* The calls of a slot's run: numbered past `from`, of its `last` site (layer.h, cg_slot_enter); 0 when none. */
static inline uint64_t cgi_slot_run_calls(const cgi_slot *s)
{
    if (!atomic_load_explicit(&s->last, memory_order_relaxed)) return 0;
    uint64_t seq = atomic_load_explicit(&s->seq, memory_order_relaxed);
    uint64_t from = atomic_load_explicit(&s->from, memory_order_relaxed);
    return seq > from ? seq - from : 0;
}

/* Moves each slot's run (calls its thread counted in the slot, not yet in its shard: layer.h,
 * cg_slot_enter) into its record's calls, in a copy of a region read from its file: every reader
 * of a file's counts reads them after this. */
static inline void cgi_stats_fold(cgi_stats_region *r)
{
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        cgi_slot *s = &r->slot[i];
        uint64_t n = cgi_slot_run_calls(s);
        int64_t k = n ? cgi_record_at(r, atomic_load_explicit(&s->last, memory_order_relaxed)) : -1;
        if (k >= 0) atomic_fetch_add_explicit(&r->r[k].c.calls, n, memory_order_relaxed);
        atomic_store_explicit(&s->last, NULL, memory_order_relaxed);
    }
}

/* A process's start time, field 22 of its /proc/PID/stat (path), after the
 * command in parentheses: the same across exec, another for a new process
 * of the same pid. 0 when it cannot be read. Only system calls: the runtime
 * reads its own in a child just forked, the CLI an ended process's. */
static inline uint64_t cgi_proc_starttime(const char *path)
{
    char buf[1024];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n <= 0) return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

#endif
