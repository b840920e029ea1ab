/* What the files of src/report share. Not installed.
 *
 * src/report writes, merges and reads back what callguard leaves for people
 * after a run: reports (JSON and a text table) and timelines. It runs at
 * exit() or in the CLI, never during a guarded call. It is handed what it
 * writes: a statistics region (src/common/stats_file.h, a process's own or read
 * from a file), a timeline's rings (src/common/trace_file.h), and, for the
 * advice, the quirks file as a function (cgi_report_quirks, set at start-up
 * by src/runtime/startup.c: the one call back up, through a pointer, drawn
 * in docs/design.md). It reads those two layouts from src/common, and calls
 * nothing else of src/runtime; of src/policy, policy_ini.h's list splitter. src/runtime
 * calls report.h (cg_report_write at exit), trace_write.h and trace_read.h
 * (the trace at exit) and outfile.h (checking CALLGUARD_REPORT and
 * CALLGUARD_TRACE); the CLI compiles outfile.c and stats_settle.c in too.
 * A file includes and calls only what is on a lower floor here, or in its
 * own row (tests/floors.py).
 * Floors, lowest first:
 *   0 outfile            a report or timeline written as a new file renamed into
 *                        place (also the CLI's check of --report and --trace)
 *   0 json_lex           the JSON lexer the report readers use, and the two
 *                        shapes they walk (an array of items, an object of members)
 *   0 pypackage          the Python package and distribution of a stall's file
 *   0 trace_read         what a trace file holds: its events kept and left out
 *   0 trace_dir          a folder of traces, one per process: its check, its
 *                        files' names (also in the CLI)
 *   0 trace_clock        which clock a trace is on; its TSC calibration made again
 *                        over the whole run
 *   0 trace_digits.h     numbers and text as the timeline's JSON writes them, in
 *                        place (for trace_write)
 *   0 trace_jscan        (the CLI) the JSON scanner of traces: values as raw spans
 *   0 stats_settle       (the CLI) an ended process's statistics file made small
 *   0 report_ranks       the view across ranks: each entry point's min, median
 *                        and max over the ranks, and where the max was
 *   0 report.h           what src/runtime and the CLI call: a report written one
 *                        process at a time, a run's statistics directory read
 *   1 internal.h         this map; what the files share
 *   1 stats_dir.c        a run's statistics directory listed and read, one file
 *                        at a time (declared in report.h)
 *   1 trace_job          (the CLI) a job's per-process traces merged on one clock
 *   1 trace_args         an event's arguments as JSON, by the layer's table
 *                        (for trace_write)
 *   1 report_lists       what a saved report's process lists besides its sites
 *                        (stalls, calls in flight, quirks, violations, hang, late
 *                        calls) read back
 *   2 region.c           what both formats read from a region: totals, result
 *                        codes, stalls worst first, late calls slowest first,
 *                        calls in flight
 *   2 text_out.c         the text's width, its lines fitted to it, strings made safe
 *                        to print, the processes' sections kept until the end
 *   3 fold.c             the combined table: every process's entry points folded
 *                        into one row each (the folding index)
 *   3 status_group.c     what processes are doing (their calls in flight), grouped,
 *                        the odd ones first (callguard status, a job's end)
 *   3 trace_flight       the calls a process had in flight at its end, as timeline
 *                        events (for trace_write)
 *   4 advice.c           the advice as data: known bugs the run's concurrency
 *                        would meet, whether they affect this run, for the writers
 *   4 table.c            the text's table of entry points, sorted by time: within
 *                        the width, or every row and column
 *   4 text_stalls.c      a process's stalls by their cost (blocked someone, not
 *                        known, harmless) and what to do, once per report
 *   4 text_ranks.c       the text's view across ranks: where the ranks differ,
 *                        in words, or every figure (--all)
 *   5 json_write.c       the JSON report
 *   5 text_table.c       the text report's sections: each process's, the combined
 *                        table and the view across ranks after it, the totals
 *   5 summary.c          the text report's summary (what needs attention, first)
 *                        and its advice
 *   6 report.c           a report written one process at a time (begin, add, end)
 *   6 status.c status_steps.c status_threads.c status_prom.c
 *                        `callguard status`: running processes' calls in flight
 *                        now, the collectives whose counts are out of step
 *                        between ranks, and each process's Python threads on
 *                        request, as text, JSON or Prometheus' text format,
 *                        from their statistics files
 *   7 merge.c            cg_report_merge: a `callguard run` directory into one report
 *   7 report_read.c      cg_report_merge_files, cg_report_convert: saved reports
 *                        read back (the report schema) into regions, written again
 *   7 trace_write        a timeline as Chrome trace-event JSON: a process's own at
 *                        exit(), or cg_trace_merge of a run's trace files
 */
#ifndef CGI_REPORT_INTERNAL_H
#define CGI_REPORT_INTERNAL_H

#include "../common/behind.h"
#include "outfile.h"
#include "report.h"
#include "report_ranks.h"

#include <stdio.h>

/* A process's counts over its sites, or a run's over its processes: each
 * counter of CGI_COUNTERS (common/stats_file.h), summed, or the most. */
typedef struct cgi_totals {
#define CGI_TOTAL_FIELD(name, summed, sharded) uint64_t name;
    CGI_COUNTERS(CGI_TOTAL_FIELD)
#undef CGI_TOTAL_FIELD
} cgi_totals;

static inline uint64_t cgi_ld(const _Atomic uint64_t *p) { return atomic_load_explicit(p, memory_order_relaxed); }

static inline void cgi_total_one(uint64_t *t, uint64_t v, int summed)
{
    if (summed)
        *t += v;
    else if (v > *t)
        *t = v;
}

static inline void cgi_add(cgi_totals *t, const cg_counters *c)
{
#define CGI_TOTAL_ADD(name, summed, sharded) cgi_total_one(&t->name, cgi_counter(c, CGI_COUNTER_##name), summed);
    CGI_COUNTERS(CGI_TOTAL_ADD)
#undef CGI_TOTAL_ADD
}

static inline void cgi_sum(cgi_totals *all, const cgi_totals *t)
{
#define CGI_TOTAL_SUM(name, summed, sharded) cgi_total_one(&all->name, t->name, summed);
    CGI_COUNTERS(CGI_TOTAL_SUM)
#undef CGI_TOTAL_SUM
}

/* ---- result codes --------------------------------------------------------------
 * A site keeps its first CGI_STATS_MAX_CODES codes other than success by
 * name; the calls of the others are in errors and states, and counted here
 * as "other". A list merged over processes keeps up to CGI_CODES_MERGED. */

#define CGI_CODES_MERGED (2 * CGI_STATS_MAX_CODES)

typedef struct cgi_code_list {
    struct {
        char name[CGI_CODE_NAME_MAX];
        int32_t code;
        int state;
        uint64_t count;
    } v[CGI_CODES_MERGED];
    size_t n;
    uint64_t errors, states; /* of the site(s): what the named codes do not cover is "other" */
} cgi_code_list;

static inline uint32_t cgi_nrec(const cgi_stats_region *r)
{
    uint32_t n = atomic_load(&r->h.nrecords);
    return n > CGI_STATS_MAX_RECORDS ? CGI_STATS_MAX_RECORDS : n;
}

/* A site's peaks: measured (exact) when its calls counted them, which a
 * blocking or serialized site's do (call.c and short.c); a call counted there makes
 * peak_inside at least 1, so 0 means not measured. */
static inline uint32_t cgi_peak_of(const cgi_peak *p) { return atomic_load_explicit(&p->peak, memory_order_relaxed); }

static inline double cgi_ms(uint64_t ns) { return (double)ns / 1e6; }

/* ---- a report, one process at a time ------------------------------------------
 * A report is written while its processes are read: each process is written,
 * and folded into the totals and the combined table, when it is added, and
 * nothing of it is kept after. What grows is the combined table: one row per
 * entry point (its names and counts) and one entry per host name. */

/* One entry point of the combined table: its counts over all processes.
 * 96 bytes and its names: the bound docs/report.md states counts on it. */
typedef struct cgi_row {
    const char *api;            /* "api\0name\0domain\0" in the arena */
    uint8_t name_at, domain_at; /* where name and domain start in it */
    uint8_t transition, scope, blocking;
    uint8_t mixed;      /* the processes ran it with different policies */
    uint8_t collective; /* some process's layer marks it collective: the ranks' counts are compared */
    cgi_totals t;
    uint64_t max_ns;
    uint32_t peak_inside, peak_waiting; /* the most over the processes (0: not measured in any) */
    uint64_t once_at;                   /* scope once: the latest call that opened it; 0: closed in some process */
    cgi_code_list *codes; /* its result codes other than success, by name; NULL while none (in the arena) */
} cgi_row;
#define CGI_ROW_NAME(row) ((row)->api + (row)->name_at)
#define CGI_ROW_DOMAIN(row) ((row)->api + (row)->domain_at)
/* Rows of the combined table that name their result codes (about 540 bytes
 * each); later rows with codes other than success show only their counts. */
#define CGI_ROWS_WITH_CODES 4096
/* Rows are kept in blocks that never move: no copy of them all to grow. */
#define CGI_ROW_BLOCK 4096

/* The rows' strings and the host names, copied into large blocks. */
typedef struct cgi_arena_block {
    struct cgi_arena_block *next;
    size_t used;
    char bytes[];
} cgi_arena_block;
#define CGI_ARENA_BLOCK ((size_t)64 << 10)

/* An open-addressing index of an array: an entry's index + 1, 0 empty. */
typedef struct cgi_index {
    uint32_t *ix;
    size_t cap; /* a power of two, at least twice the entries */
} cgi_index;

/* A quirk some process of the report matched (its record), and whether one applied it. */
typedef struct cgi_quirk_seen {
    const char *name;
    int applied;
} cgi_quirk_seen;

/* The text's processes' sections, kept until the summary before them is
 * written: in memory up to CGI_SPOOL_MEMORY, then in an unlinked file. */
typedef struct cgi_spool {
    FILE *f;
    char *buf;
    size_t len;
    int on_disk;
    unsigned folds; /* the kinds of fold made as it is drained (CGI_FOLD_*) */
} cgi_spool;
/* A section's lines that depend on the whole report, which is not known
 * when the section is spooled: a line that starts with CGI_FOLD_MARK, a
 * kind's letter and '-' is shown unless that kind is folded, with '+' only
 * when it is (the one line that says the others). A string of a process
 * never holds the mark: cgi_text_str makes control characters '?'. */
#define CGI_FOLD_MARK '\001'
enum {
    CGI_FOLD_UNRANKED = 1u, /* 'u': a process without a rank in a job with ranks (the launcher) */
    CGI_FOLD_RANKED = 2u,   /* 'r': a rank's table, where the view across ranks compares them */
};
#define CGI_SPOOL_MEMORY ((size_t)4 << 20)

/* ---- status_group.c ---- */
#define CGI_STATUS_MAX_CALLS 8
typedef struct cgi_status_threads cgi_status_threads;
/* What a process is doing, taken from its region. */
typedef struct cgi_status_proc {
    int32_t pid, rank; /* rank -1: none */
    uint32_t world_size;
    char host[72];
    char command[256];
    uint64_t up_ns, calls;
    uint64_t watchdog_ago_ns;                 /* since its watchdog last looked at the calls; UINT64_MAX: not known */
    unsigned ncalls, in_flight;               /* the calls below, and all its calls in flight */
    cgi_hang_call call[CGI_STATUS_MAX_CALLS]; /* its first calls in flight, age_ns as of now */
    const cgi_status_threads *threads;   /* its Python threads as it answered (status_threads.c); NULL: not asked */
    int8_t behind[CGI_STATUS_MAX_CALLS]; /* the call each waits behind inside the driver (behind.c), or -1 */
    const char *behind_quirk[CGI_STATUS_MAX_CALLS]; /* the quirk that says so (static), or NULL */
} cgi_status_proc;
typedef struct cgi_status_group {
    size_t first, n;    /* into the order */
    uint64_t oldest_ns; /* the oldest of their first calls */
} cgi_status_group;
/* Takes p from r, ages as of now_mono_ns (CLOCK_MONOTONIC of this host);
 * 0: a process that ended, as of its watchdog's last look. */
CGI_HIDDEN void cgi_status_take(const cgi_stats_region *r, uint64_t now_mono_ns, cgi_status_proc *p);
/* The processes v[0..n) grouped by what they do, groups of one first:
 * order[] lists them group after group, groups[0..ng) say where each
 * starts. cgi_status_group: 0, or -1 when out of memory (nothing to free). */
typedef struct cgi_status_grouping {
    size_t *order;
    cgi_status_group *groups;
    size_t ng;
} cgi_status_grouping;
CGI_HIDDEN int cgi_status_grouped(const cgi_status_proc *v, size_t n, cgi_status_grouping *g);
CGI_HIDDEN void cgi_status_grouping_free(cgi_status_grouping *g);
/* "ranks 0-1, 3" or "pids 12, 14": a group's members. */
CGI_HIDDEN void cgi_status_members(FILE *out, const cgi_status_proc *v, const size_t *order, const cgi_status_group *g);
/* " at FILE:LINE in FUNCTION", or nothing when not known. */
CGI_HIDDEN void cgi_status_where(FILE *out, const cgi_hang_call *e);
/* " NAME=VALUE NAME=VALUE": the arguments a hung call waits on (wait_args), or nothing. */
CGI_HIDDEN void cgi_text_args(FILE *out, const cgi_hang_call *e);

/* ---- behind (src/common/behind.h): the line and the member ---- */
/* "      thread B "..." waits behind thread A "..."'s NAME on the same device: ... (QUIRK)\n" */
CGI_HIDDEN void cgi_text_behind(FILE *out, const cgi_hang_call *b, const cgi_hang_call *a, const char *quirk);
/* ", "waits_behind": {"tid": A, "name": NAME, "quirk": QUIRK}", or null when quirk is NULL. */
CGI_HIDDEN void cgi_json_behind(FILE *out, const cgi_hang_call *a, const char *quirk);

/* ---- status.c ---- */
typedef struct cgi_status_steps cgi_status_steps;
CGI_HIDDEN int cgi_status_text(FILE *out, const cgi_status_proc *v, size_t n, const char *where,
                               cgi_status_steps *steps);
CGI_HIDDEN int cgi_status_json(FILE *out, const cgi_status_proc *v, size_t n, cgi_status_steps *steps);
/* ---- status_threads.c ---- */
/* A process's Python threads, asked for and read from its statistics file:
 * each thread's record (src/common/stats_file.h) and its frames. */
typedef struct cgi_status_frame {
    int32_t line; /* -1: none */
    const char *file, *func;
} cgi_status_frame;
typedef struct cgi_status_thread {
    cgi_thread_rec rec;       /* checked: user within the frames, the name ended */
    cgi_status_frame *frames; /* rec.nframes, into the area read */
    int extra;                /* 1: the last frame is the user's, past the depth asked (its depth: rec.user_depth) */
} cgi_status_thread;
struct cgi_status_threads {
    int fd; /* the file, read-write, from the request until it is freed; -1: not asked */
    uint32_t ask, depth;
    int asked, answered;
    uint64_t asked_at_ns, waited_ns; /* CLOCK_MONOTONIC when asked; how long until the answer (or the wait ended) */
    char why[200];                   /* why it was not asked or did not answer */
    cgi_threads_answer head;         /* the answer's head, checked */
    unsigned char *area;             /* its records as read */
    cgi_status_thread *v;
    size_t n;
};
/* ask: opens the statistics file at path read-write (the caller's own, of
 * this version), allocates its threads area and asks for `depth` frames a
 * thread (NULL: out of memory; else ->asked or ->why). wait: waits at most
 * wait_ns for every process asked to answer, reading each answer as it
 * comes. text, json: a process's threads under its calls in flight (JSON:
 * its "threads" and "threads_read" members). */
CGI_HIDDEN cgi_status_threads *cgi_status_threads_ask(const char *path, int depth);
CGI_HIDDEN void cgi_status_threads_wait(cgi_status_threads *const *v, size_t n, uint64_t wait_ns);
CGI_HIDDEN void cgi_status_threads_free(cgi_status_threads *t);
CGI_HIDDEN void cgi_status_threads_text(FILE *out, const cgi_status_proc *p);
CGI_HIDDEN void cgi_status_threads_json(FILE *out, const cgi_status_proc *p);
/* ---- status_prom.c ---- */
/* Prometheus' text format: begun, a process added at a time (its region and
 * what status took of it), ended with the collectives out of step (steps
 * may be NULL); cgi_prom_begin: NULL out of memory; cgi_prom_end frees m. */
typedef struct cgi_prom cgi_prom;
CGI_HIDDEN cgi_prom *cgi_prom_begin(void);
CGI_HIDDEN void cgi_prom_add(cgi_prom *m, const cgi_stats_region *r, const cgi_status_proc *p);
CGI_HIDDEN int cgi_prom_end(cgi_prom *m, FILE *out, cgi_status_steps *steps);
/* ---- status_steps.c ---- */
/* Ranked processes' counts of collectives, compared across the ranks (report_ranks.h). new: NULL when out of
 * memory; add: one process's region, 0 or -1 (out of memory); write: the collectives out of step, as text lines
 * (none: nothing) or JSON's ",\n \"out_of_step\": [...]", after the last process; 0 or -1. */
CGI_HIDDEN cgi_status_steps *cgi_status_steps_new(void);
CGI_HIDDEN int cgi_status_steps_add(cgi_status_steps *s, const cgi_stats_region *r);
/* json: 0 text, 1 JSON, 2 Prometheus samples. */
CGI_HIDDEN int cgi_status_steps_write(FILE *out, cgi_status_steps *s, int json);
CGI_HIDDEN void cgi_status_steps_free(cgi_status_steps *s);

/* What the summary says of the processes, gathered as they are added
 * (summary.c): counts, and the first or worst of each kind. */
typedef struct cgi_summary {
    size_t exited0, exited, signaled, execed, unknown; /* processes by how they ended */
    int32_t odd_pid;                                   /* the first that did not exit 0 */
    int odd_state, odd_status;
    size_t died_inside; /* processes that ended with calls in flight */
    int32_t died_pid;
    unsigned died_threads;
    char died_site[CGI_NAME_MAX];
    size_t hung; /* processes that wrote a hang report */
    int32_t hang_pid;
    cgi_hang_call hang_call;
    uint64_t violations; /* thread-rule violations, all processes */
    cgi_violation viol;  /* the first kept */
    /* The stalls kept, by what they cost (CGI_STALL_*): how many, their
     * time, the worst (ns 0: none). */
    uint64_t stall_n[3], stall_ns[3];
    cgi_stall stall[3];
} cgi_summary;

struct cgi_report_writer {
    cgi_outfile o;
    char *path;
    cg_report_format format;
    size_t nproc;
    cgi_totals all;
    cgi_row **rowblk; /* first-seen order, CGI_ROW_BLOCK a block */
    size_t nrow, nblk, blkcap;
    cgi_index rowix;
    const char **hosts;
    size_t nhosts, hostcap;
    cgi_index hostix;
    int apiw;
    int oom;
    cgi_quirk_seen *quirks; /* the quirks some process matched, by name (advice) */
    size_t nquirks, quirkcap;
    const char **probed; /* the APIs some process probed for quirks (advice) */
    size_t nprobed, probedcap;
    int quirks_unsure; /* a process kept not every quirk it matched */
    size_t ncodelists; /* rows with a list of result codes */
    cgi_arena_block *arena;
    cgi_ranks *ranks; /* the view across ranks (report_ranks.h) */
    /* The text: its width (0: every row and column, at any width), the
     * processes' sections, the summary's facts, and the saved reports it
     * was read from (callguard report; for the advice's command line). */
    int width;
    int text_err; /* why the text cannot be written (an errno; with oom set) */
    cgi_spool spool;
    cgi_summary sum;
    unsigned said; /* the stalls' advice given already (text_stalls.c) */
    const char *const *sources;
    size_t nsources;
    /* How the processes of a run ended (callguard run), those that made
     * no guarded call and left no file included; NULL otherwise. */
    const cg_proc_exit *exits;
    size_t nexits;
    /* The processes that ended with calls in flight (status_group.c), at
     * most CGI_REPORT_MAX_ENDED; ended_more: those past it. */
    cgi_status_proc *ended;
    size_t nended, endedcap, ended_more;
    /* The job was stuck (`callguard run --stuck`): the view as a JSON
     * object, and its "headline" for the text; NULL when not. */
    char *stuck, *stuck_line;
    cgi_not_counted not_counted;
};
#define CGI_REPORT_MAX_ENDED 1024

/* ---- region.c ---- */
CGI_HIDDEN void cgi_codes_add(cgi_code_list *l, const cgi_stats_record *rec, size_t cap);
CGI_HIDDEN void cgi_codes_other(const cgi_code_list *l, uint64_t *errors, uint64_t *states);
CGI_HIDDEN cgi_totals cgi_proc_totals(const cgi_stats_region *r);
CGI_HIDDEN void cgi_exit_of(const cgi_proc_view *p, int *state, int *status);
CGI_HIDDEN size_t cgi_stalls_worst_first(const cgi_stats_region *r, const cgi_stall **v);
/* The kept late calls, slowest first, into v (CGI_LATE_MAX long); and how
 * many more were found than the `kept` listed. */
CGI_HIDDEN size_t cgi_late_slowest_first(const cgi_stats_region *r, const cgi_late_call **v);
CGI_HIDDEN uint64_t cgi_late_dropped(const cgi_stats_region *r, size_t kept);
CGI_HIDDEN int cgi_in_flight(const cgi_slot *slot);
CGI_HIDDEN int cgi_waiting(const cgi_slot *slot);
CGI_HIDDEN const cgi_stats_record *cgi_slot_record(const cgi_stats_region *r, const cgi_slot *slot);
CGI_HIDDEN uint64_t cgi_entered_ns(const cgi_stats_region *r, const cgi_slot *slot);
CGI_HIDDEN const cgi_hang_call *cgi_hang_of_slot(const cgi_stats_region *r, const cgi_slot *slot);

/* ---- json_write.c ---- */
CGI_HIDDEN void cgi_json_str(FILE *out, const char *s);
CGI_HIDDEN void cgi_json_str_or_null(FILE *out, const char *s);
CGI_HIDDEN void cgi_json_field_str(FILE *out, const char *key, const char *v);
CGI_HIDDEN void cgi_json_field_str_or_null(FILE *out, const char *key, const char *v);
/* A hung call's "python" ({"file", "line", "function"} or null), and its
 * "runtime" and "holds_runtime" members: the hang page's and status's. */
CGI_HIDDEN void cgi_json_hang_python(FILE *out, const cgi_hang_call *e);
CGI_HIDDEN void cgi_json_hang_runtime(FILE *out, const cgi_hang_call *e);
/* A hung call's ", \"args\": {NAME: VALUE, ...}" (its wait_args, values as text), or null when it has none. */
CGI_HIDDEN void cgi_json_hang_args(FILE *out, const cgi_hang_call *e);
CGI_HIDDEN void cgi_json_begin(FILE *out);
CGI_HIDDEN void cgi_json_process(FILE *out, const cgi_proc_view *p, const cgi_totals *pt, size_t nproc);
CGI_HIDDEN void cgi_json_end(FILE *out, size_t nproc, const cgi_totals *pall, size_t lost, const cgi_report_writer *w);

/* ---- text_out.c ---- */
/* The default width of the text, and the least COLUMNS can make it. */
#define CGI_TEXT_WIDTH 100
#define CGI_TEXT_MIN_WIDTH 60
CGI_HIDDEN void cgi_text_str(FILE *out, const char *s, size_t max);
#define CGI_TEXT_FIELD(out, field) cgi_text_str((out), (field), sizeof(field))
/* "SIGABRT", or "signal 77". */
CGI_HIDDEN void cgi_text_signal(int sig, char *buf, size_t cap);
/* The text's width for out: COLUMNS when set (at least CGI_TEXT_MIN_WIDTH),
 * else a terminal's up to CGI_TEXT_WIDTH, else CGI_TEXT_WIDTH. */
CGI_HIDDEN int cgi_text_width(FILE *out);
/* Writes text's lines to out, each at most width columns (0: as they are):
 * a longer one goes on, at a space, on lines indented further. */
CGI_HIDDEN void cgi_text_fit(FILE *out, const char *text, size_t len, int width);
/* The spool: opened (0 or an errno), kept bounded after each section (past
 * CGI_SPOOL_MEMORY into a file; 0 or an errno), drained fitted into out
 * and closed (0 or an errno), or dropped. */
CGI_HIDDEN int cgi_spool_open(cgi_spool *s);
CGI_HIDDEN int cgi_spool_bound(cgi_spool *s);
CGI_HIDDEN int cgi_spool_drain(cgi_spool *s, FILE *out, int width);
CGI_HIDDEN void cgi_spool_drop(cgi_spool *s);

/* ---- table.c ---- */
/* One row of a table: an entry point of a process or of the combined table. */
typedef struct cgi_trow {
    const char *api, *name, *domain; /* domain "" when not serialized */
    uint8_t transition, scope, blocking, mixed;
    cgi_totals t;
    uint64_t max_ns;
    uint32_t peak_inside, peak_waiting;
    uint64_t once_at;            /* scope once: the call that opened it (combined: the latest), 0: closed */
    const cgi_stats_record *rec; /* a process's row: its result codes are read from it */
    const cgi_code_list *codes;  /* a combined row's (NULL: none) */
} cgi_trow;
/* The rows of a process's entry points, or of the combined table (malloc'd;
 * NULL when out of memory). */
CGI_HIDDEN cgi_trow *cgi_rows_of_process(const cgi_stats_region *r, size_t *n);
CGI_HIDDEN cgi_trow *cgi_rows_of_writer(const cgi_report_writer *w, size_t *n);
CGI_HIDDEN void cgi_rows_sort(cgi_trow *v, size_t n);
/* Sorts the rows and writes them as a table at most width columns wide (0:
 * every row and column); timing: "sampled", "exact", or NULL (not one). */
CGI_HIDDEN void cgi_table_write(FILE *out, cgi_trow *v, size_t n, int width, const char *timing);

/* ---- text_stalls.c ---- */
/* What a stall cost: other threads waited for the runtime it held
 * (waiters >= 1), none did, or that is not known (waiters -1). */
enum { CGI_STALL_BLOCKED = 0, CGI_STALL_UNKNOWN = 1, CGI_STALL_IDLE = 2 };
CGI_HIDDEN int cgi_stall_kind(const cgi_stall *st);
/* A process's stalls (`stalls`: its sites' count) by their cost, and what
 * to do; at a width, the harmless ones in one line and no advice for them;
 * `said` keeps what the report said already (0 at its start). */
CGI_HIDDEN void cgi_text_stalls(FILE *out, const cgi_stats_region *r, uint64_t stalls, int width, unsigned *said);

/* ---- text_table.c ---- */
/* A process's section; 0, or ENOMEM. */
CGI_HIDDEN int cgi_text_process(FILE *out, const cgi_proc_view *p, const cgi_totals *pt, int width, unsigned *said);
/* The combined table (more than one process) and the view across ranks; 0, or ENOMEM. */
CGI_HIDDEN int cgi_text_tables(FILE *out, const cgi_report_writer *w);
/* ---- text_ranks.c ---- */
/* The view across ranks (two ranks or more): where they differ, in words,
 * or every figure (--all); 0, or ENOMEM. */
CGI_HIDDEN int cgi_text_across_ranks(FILE *out, const cgi_report_writer *w);
/* The totals line, last, and the processes lost. */
CGI_HIDDEN void cgi_text_totals(FILE *out, const cgi_report_writer *w, size_t lost);

/* ---- summary.c ---- */
/* Notes what the summary says of a process. */
CGI_HIDDEN void cgi_summary_add(cgi_summary *s, const cgi_proc_view *p);
/* The summary: the run in one line, then what needs attention. 0, or ENOMEM. */
CGI_HIDDEN int cgi_summary_write(FILE *out, const cgi_report_writer *w, size_t lost);
/* The advice after the tables: in full where it affects the run, one line
 * for the rest; every piece in full (all: CG_REPORT_ADVICE). 0, or ENOMEM. */
CGI_HIDDEN int cgi_advice_text(FILE *out, const cgi_report_writer *w, int all);

/* ---- fold.c ---- */
CGI_HIDDEN cgi_row *cgi_row_at(const cgi_report_writer *w, size_t i);
CGI_HIDDEN void cgi_fold(cgi_report_writer *w, const cgi_stats_region *r);

/* ---- advice.c ---- */
/* One piece of advice: an entry point several threads were inside at once
 * (or waited for, where the quirk was applied), and a known bug that
 * serializes it. */
typedef struct cgi_advice {
    const cgi_row *row;
    const cgi_quirk_view *quirk;
    int applied;  /* a process of the run applied the quirk */
    int affects;  /* 1: a process matched the quirk; 0: its API's drivers were probed and none did; -1: not known */
    size_t index; /* 0 for the report's first piece */
} cgi_advice;
typedef void cgi_advice_fn(const cgi_advice *a, void *arg);
/* Calls fn for each piece of the report's advice; returns how many. */
CGI_HIDDEN size_t cgi_advice_each(const cgi_report_writer *w, cgi_advice_fn *fn, void *arg);
/* The quirk's fix as `callguard run` takes it, "--serialize a=D,b=D"
 * (":once" after each for a quirk of first calls); malloc'd; NULL for an
 * advice-only quirk (its advice says what to do) or when out of memory. */
CGI_HIDDEN char *cgi_advice_fix(const cgi_quirk_view *q);

#endif
