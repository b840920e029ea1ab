/* callguard.h: the C API of libcallguard.
 *
 * Every function returns CG_OK (0) or a negative cg_status; cg_last_error()
 * then holds a one-line message naming the bad value and what is accepted.
 * The per-site setters may also return CG_PENDING (positive: a success).
 * Sites are named by the API header's own spelling ("zeModuleCreate").
 *
 * Per-site settings (cg_serialize, cg_set_transition, cg_set_blocking,
 * cg_configure of CALLGUARD_SERIALIZE or _TRANSITION, cg_policy_load) are
 * applied to the layers loaded and kept for layers that load later (they
 * may be dlopened long after). For a site name:
 *   - an entry point of a loaded layer: applied, CG_OK;
 *   - a name with no loaded layer's prefix: kept, applied when a layer
 *     with that entry point loads, CG_PENDING (cg_last_error() names it);
 *     if that layer lacks it, one line on stderr says so and the setting
 *     is dropped; if no layer with it ever loads, one line on stderr at
 *     exit names it;
 *   - a name with a loaded layer's prefix that the layer lacks ("toyNope"),
 *     or a loaded entry point spelt in another case ("ClBuildProgram", with
 *     a hint naming "clBuildProgram"): CG_ENOENT, nothing changes.
 * Settings read from the environment at start-up follow the same rules,
 * except that a bad name found when its layer loads exits with status 2.
 */
#ifndef CALLGUARD_H
#define CALLGUARD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is exported from libcallguard, whatever the
 * visibility the including code builds with. */
#pragma GCC visibility push(default)

#define CALLGUARD_VERSION "0.1.0"

typedef enum cg_status {
    CG_PENDING = 1, /* kept: no loaded layer has the entry point yet (see above) */
    CG_OK = 0,
    CG_EINVAL = -1,  /* a bad value */
    CG_ENOENT = -2,  /* unknown entry point or domain */
    CG_EIO = -3,     /* a file could not be read or written */
    CG_ENOMEM = -4,  /* out of memory or out of slots */
    CG_EFORMAT = -5, /* a malformed policy or report file */
} cg_status;

typedef enum cg_transition {
    CG_TRANSITION_ALWAYS = 0,   /* leave the runtime around every call */
    CG_TRANSITION_BLOCKING = 1, /* only around sites marked blocking */
    CG_TRANSITION_NEVER = 2,
} cg_transition;

typedef enum cg_scope {
    CG_SCOPE_PROCESS = 0, /* one lock for the whole domain */
    CG_SCOPE_HANDLE = 1,  /* one lock per value of the first input handle (striped) */
    CG_SCOPE_ONCE = 2,    /* the domain's one lock until the site's first call that succeeds; then
                           * none: the site is unguarded (its domain reads "", its scope once) */
    CG_SCOPE_SHARED = 3,  /* the domain's one lock, taken shared: any number of shared callers at
                           * once, never beside one of its other sites (exclusive); a waiting
                           * exclusive caller keeps new shared ones out */
} cg_scope;

typedef enum cg_adapter_mode {
    CG_ADAPTER_DETECT = 0, /* only ask holds(): calls made with the runtime held are reported as stalls */
    CG_ADAPTER_ACTIVE = 1, /* leave the runtime around calls, as each site's transition says */
} cg_adapter_mode;

/* A host-runtime adapter. call_outside runs fn(arg) with the runtime left
 * (GIL released, GC-safe...) or runs it directly where that is not possible;
 * then it calls cg_adapter_ran_held() first, so that the call is counted as
 * made with the runtime held (a stall when it lasts one).
 * holds() tells whether the calling thread holds the runtime now. */
typedef struct cg_adapter {
    const char *name;
    int (*holds)(void);
    void (*call_outside)(void (*fn)(void *), void *arg);
} cg_adapter;

const char *cg_status_name(int status);
/* The message of the last failed call on this thread ("" if none). */
const char *cg_last_error(void);

/* Policy of one site. domain NULL or "" removes serialization. */
int cg_serialize(const char *site, const char *domain, cg_scope scope);
/* site NULL: every site of every layer. */
int cg_set_transition(const char *site, cg_transition transition);
int cg_set_blocking(const char *site, int blocking, const char *reason);

/* Adapter: NULL removes it. The adapter struct must outlive its use. */
int cg_set_adapter(const cg_adapter *adapter, cg_adapter_mode mode);
/* From an adapter's call_outside, on its thread, just before it runs fn
 * without having left the runtime (Ruby's adapter, when an interrupt is
 * pending): the guarded call is then one made holding the runtime. */
void cg_adapter_ran_held(void);
/* The built-in CPython adapter (symbols looked up in the running process). */
const cg_adapter *cg_adapter_cpython(void);
/* The built-in Julia adapter (1.7 and later; symbols looked up in the
 * running process): a Julia thread waits in the driver GC-safe. */
const cg_adapter *cg_adapter_julia(void);
/* "none", "auto" (detect only: CPython, else Julia, when present),
 * "release" (the one auto finds, active; CPython's if none), "cpython" or
 * "julia" (active). */
int cg_set_runtime(const char *name);

/* Statistics are off until a report is asked for (CALLGUARD_REPORT) or
 * they are switched on here. */
int cg_stats_enable(int on);
/* Calls above this many milliseconds made with the runtime held are stalls. */
int cg_set_stall_ms(uint32_t ms);

typedef struct cg_site_stats {
    uint64_t calls;        /* calls that reached the driver, nested ones included */
    uint64_t nested;       /* calls made on a thread already inside a guarded call */
    uint64_t errors;       /* calls whose result was a failure (not success, not a state) */
    uint64_t total_ns;     /* time in the driver */
    uint64_t max_ns;       /* longest call */
    uint64_t lock_wait_ns; /* time waiting for the site's domain lock */
    uint64_t stalls;       /* long calls or lock waits made with the runtime held */
    uint64_t stall_ns;
    uint64_t states; /* calls whose result reported a state (the policy's states: ZE_RESULT_NOT_READY) */
    /* The most threads inside the driver call at once, and waiting for the
     * site's lock at once. Counted (exactly) only at blocking or serialized
     * sites; 0 and 0 elsewhere: not measured (docs/report.md). */
    uint32_t peak_inside, peak_waiting;
} cg_site_stats;

int cg_get_stats(const char *site, cg_site_stats *out);
int cg_reset_stats(void);

/* CG_REPORT_TEXT: the table for people, at most 100 columns (COLUMNS when
 * set); CG_REPORT_TEXT_ALL: the same with every row and column, at any
 * width; CG_REPORT_ADVICE: only the advice, every piece in full
 * (docs/report.md). */
typedef enum cg_report_format {
    CG_REPORT_JSON = 0,
    CG_REPORT_TEXT = 1,
    CG_REPORT_TEXT_ALL = 2,
    CG_REPORT_ADVICE = 3,
    CG_REPORT_PROMETHEUS = 4 /* cg_status_write only: Prometheus' text exposition format */
} cg_report_format;
/* Writes this process's report; path "-" is stderr. An existing file at
 * path is replaced only when it is empty or a report or timeline callguard
 * wrote; any other is left as it was, the report is kept beside it
 * (PATH.callguard-report) and CG_EIO's cg_last_error says where. */
int cg_report_write(const char *path, cg_report_format format);

/* Writes the report of a whole process tree from the statistics files a
 * `callguard run` collected in dir (one per process). exits: what the CLI
 * knows of how processes ended (it reaps its child and orphaned ones). */
typedef struct cg_proc_exit {
    int pid;
    int signaled; /* 1: killed by signal `status`; 0: exited with `status` */
    int status;
} cg_proc_exit;
int cg_report_merge(const char *dir, const cg_proc_exit *exits, size_t nexits, const char *path,
                    cg_report_format format);
/* `callguard status`: what running processes are doing now, read from
 * their statistics files (paths; each opened without following a link
 * and left out, said on stderr, unless it is the caller's own and a
 * statistics file of this version). Writes to fd, as format (CG_REPORT_JSON,
 * else text), the processes grouped by what they are doing, groups of one
 * first, then each process with its calls in flight: their age, lock,
 * runtime held and Python line. `where` ends the text's first line ("on
 * host vm"). Reads only: no signal, no ptrace, nothing of the processes'. */
int cg_status_write(const char *const *stats_paths, size_t npaths, const char *where, int fd, cg_report_format format);
/* cg_status_write, and under each process every Python thread: its name
 * (threading's), OS thread id, whether it holds the GIL, its stack (at most
 * `depth` frames, innermost first; the user's own frame marked) and the
 * guarded call it is in. The question goes through each statistics file
 * (opened read-write: the caller's own), which the process's watchdog
 * answers at its next tick, read from the interpreter's memory; it waits
 * at most a second for them all, and says which did not answer. depth 0
 * asks nothing: cg_status_write. */
int cg_status_write_threads(const char *const *stats_paths, size_t npaths, const char *where, int fd,
                            cg_report_format format, int depth);
/* What one running process is doing, in brief: for `callguard status
 * --stuck` and `--watch` and `callguard run --stuck` (docs/report.md,
 * "Stuck jobs"). Its oldest call in flight is the one named. */
typedef struct cg_status_brief {
    int pid, rank; /* rank -1: none */
    unsigned world_size;
    char host[72];
    unsigned long long calls; /* its guarded calls so far */
    unsigned in_flight;
    unsigned long long oldest_ns; /* the oldest call's age; 0: none in flight */
    char api[32], name[64];       /* that call's entry point */
    int waiting;                  /* 1: it waits for the entry point's lock */
    char where[200];              /* "FILE:LINE in FUNCTION" of its Python line; "" when not known */
} cg_status_brief;
/* Reads each statistics file as cg_status_write does (files that are not
 * the caller's, or not statistics files, are left out and said on stderr
 * unless quiet) into out[0..npaths); *nout: how many were read. */
int cg_status_briefs(const char *const *stats_paths, size_t npaths, cg_status_brief *out, size_t *nout, int quiet);
/* The reports this process writes from now on carry `stuck`: a JSON
 * object (the view `callguard run --stuck` printed, docs/report.md); NULL
 * drops it. `callguard run` sets it; a saved report's is kept on merging. */
int cg_report_set_stuck(const char *json_object);
/* Reads a saved JSON report (refusing anything else: another schema or
 * version, a truncated file) and writes it again as `format` to path. */
int cg_report_convert(const char *json_path, const char *path, cg_report_format format);
/* Reads several saved JSON reports (the ranks of a job, one per node...)
 * and writes them as one report: every process section of every file, in
 * order, and for a table one more table summing each entry point over all
 * of them. A bad file stops it, the message naming the file. */
int cg_report_merge_files(const char *const *json_paths, size_t npaths, const char *path, cg_report_format format);

/* Pauses (0) and resumes (1) the recording that CALLGUARD_TRACE and
 * CALLGUARD_TRACE_LINES switched on, e.g. to trace one phase of a program;
 * what was recorded stays. Resuming with neither set is CG_EINVAL.
 * Events are recorded only while statistics are on (cg_stats_enable). */
int cg_trace_enable(int on);

/* Writes the timeline of a whole process tree (Chrome trace-event JSON)
 * from the trace files a `callguard run --trace` collected in dir (one per
 * process that made a guarded call). totals (may be NULL): what it holds. */
typedef struct cg_trace_totals {
    size_t processes, threads;
    uint64_t events;  /* events written */
    uint64_t dropped; /* events left out: by a size bound (CALLGUARD_TRACE_MAX), a full disk, past the thread limit */
    unsigned events_per_thread; /* 0: a thread keeps every event (no ring since trace files of version 3) */
} cg_trace_totals;
int cg_trace_merge(const char *dir, const char *path, cg_trace_totals *totals);

typedef struct cg_site_info {
    const char *api;
    const char *name;
    const char *variant_of; /* NULL, or the site whose policy and report row this one shares */
    cg_transition transition;
    int blocking;
    const char *reason; /* NULL unless blocking */
    const char *domain; /* "" when not serialized */
    cg_scope scope;
    /* Thread rules (callguard/threads.h): nrules entries of the layer's own
     * table, described by callguard/layer.h's struct cg_rule. */
    unsigned nrules;
    const struct cg_rule *rules;
} cg_site_info;
/* Sites of the layers loaded in this process, for api ("cl"; NULL: all).
 * Fills up to max entries and returns how many there are. */
long cg_list_sites(const char *api, cg_site_info *out, size_t max);

/* The layers loaded in this process, in the order they registered. */
typedef struct cg_layer_info {
    const char *api;          /* "cl" */
    const char *prefixes;     /* comma-separated entry point prefixes: "ze,zet,zes" */
    const char *soname;       /* the vendor library's soname its shim stands in for, or several
                               * comma-separated (a shim for each); NULL if none */
    const char *library_env;  /* "CALLGUARD_CL_LIBRARY" */
    const char *library_path; /* the real library found when the layer was built; NULL if none */
    const char *header;       /* the header it was generated from */
    const char *path;         /* the layer's own file */
    int shim;                 /* 1: loaded as its soname's shim */
    unsigned nsites;
} cg_layer_info;
/* Fills up to max entries and returns how many layers there are. */
long cg_list_layers(cg_layer_info *out, size_t max);
/* Where the real library of layer `api` is looked for by soname when its
 * variable (CALLGUARD_<API>_LIBRARY) names none, as its policy's [api]
 * `search` says: CG_SEARCH_SYSTEM, as the dynamic loader looks
 * (LD_LIBRARY_PATH, its cache, the system's folders), or
 * CG_SEARCH_LD_LIBRARY_PATH, on LD_LIBRARY_PATH alone (a library that
 * programs bring along, as PyTorch brings NCCL: a system copy is another
 * version). -1 when no layer of that name is loaded. */
#define CG_SEARCH_SYSTEM 0 /* also in layer.h */
#define CG_SEARCH_LD_LIBRARY_PATH 1
int cg_layer_search(const char *api);

/* Applies one setting as the environment would: cg_configure("CALLGUARD_SERIALIZE", "toyCompile"). */
int cg_configure(const char *variable, const char *value);
/* Reads a policy file (INI: [defaults] and one section per entry point). */
int cg_policy_load(const char *path);

/* Names a result code of an API ("cl", "ze", "cuda", "toy"); NULL if unknown. */
const char *cg_result_name(const char *api, long result);

#pragma GCC visibility pop

#include <callguard/threads.h>

#ifdef __cplusplus
}
#endif
#endif
