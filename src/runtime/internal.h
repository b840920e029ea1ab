/* Internal interfaces of libcallguard. Not installed. */
#ifndef CG_INTERNAL_H
#define CG_INTERNAL_H

#include <callguard/callguard.h>
#include <callguard/layer.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CG_HIDDEN __attribute__((visibility("hidden")))

/* ---- statistics region (stats.c) ------------------------------------------
 * One region per process, laid out so another process (the CLI) can read it:
 * a header page, then fixed-size records. When CALLGUARD_STATS_DIR names a
 * directory the region is a shared mapping of a file there, so counts
 * survive abort(), _exit() and exec(). */
#define CG_STATS_MAGIC "CGSTATS"
#define CG_STATS_VERSION 1
#define CG_STATS_MAX_RECORDS 4096
#define CG_NAME_MAX 64
#define CG_DOMAIN_NAME_MAX 40

typedef struct cg_counters {
    _Atomic uint64_t calls, nested, errors, total_ns, max_ns, lock_wait_ns, stalls, stall_ns;
} cg_counters;

typedef struct cg_stats_record {
    char api[8];
    char name[CG_NAME_MAX];
    char domain[CG_DOMAIN_NAME_MAX]; /* "" when not serialized */
    uint8_t transition, scope, blocking, used;
    uint32_t reserved;
    cg_counters c;
    char pad[192 - 8 - CG_NAME_MAX - CG_DOMAIN_NAME_MAX - 8 - sizeof(cg_counters)];
} cg_stats_record;

enum { CG_PROC_RUNNING = 0, CG_PROC_EXITED = 1, CG_PROC_SIGNALED = 2, CG_PROC_EXECED = 3 };

typedef struct cg_stats_header {
    char magic[8];
    uint32_t version;
    uint32_t max_records;
    _Atomic uint32_t nrecords;
    int32_t pid;
    int32_t ppid;
    _Atomic int32_t state;  /* CG_PROC_* as the process itself saw it */
    int32_t status;         /* exit status or signal number */
    uint32_t reserved;
    uint64_t start_unix_ns;
    char command[2048];     /* argv joined by spaces */
    char pad[4096 - 8 - 4 * 8 - 8 - 2048];
} cg_stats_header;

typedef struct cg_stats_region {
    cg_stats_header h;
    cg_stats_record r[CG_STATS_MAX_RECORDS];
} cg_stats_region;

CG_HIDDEN extern cg_stats_region *cg_stats;
CG_HIDDEN int cg_stats_init(const char *dir);
CG_HIDDEN void cg_stats_after_fork_child(void);
CG_HIDDEN cg_counters *cg_stats_record_site(const char *api, const char *name);
CG_HIDDEN void cg_stats_note_policy(cg_site *s);

/* ---- reports (report.c) -------------------------------------------------- */
typedef struct cg_proc_view {
    const cg_stats_region *region;
    int have_exit;       /* 1 when exit/state below is known from outside */
    int exit_state;      /* CG_PROC_* */
    int exit_status;
} cg_proc_view;

/* Writes a report of these processes to path ("-": stderr). */
CG_HIDDEN int cg_report_to(const char *path, const cg_proc_view *procs, size_t n, cg_report_format format);

/* ---- configuration (config.c) -------------------------------------------- */
typedef struct cg_config {
    _Atomic int stats_on;
    _Atomic uint64_t stall_ns;
    const cg_adapter *_Atomic adapter;
    _Atomic int adapter_mode;
    FILE *_Atomic trace;
} cg_config;

CG_HIDDEN extern cg_config cg_cfg;
/* Serializes every configuration change and layer registration. */
CG_HIDDEN extern pthread_mutex_t cg_cfg_lock;

CG_HIDDEN int cg_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
CG_HIDDEN void cg_env_apply_pending(cg_layer *layer);
CG_HIDDEN int cg_parse_transition(const char *v, cg_transition *out);
CG_HIDDEN const char *cg_transition_name(unsigned t);

/* ---- sites and layers (site.c) ------------------------------------------- */
CG_HIDDEN extern cg_layer *cg_layers;
/* Recomputes site->direct from its policy and the global configuration. */
CG_HIDDEN void cg_site_refresh(cg_site *s);
CG_HIDDEN void cg_refresh_all(void);
/* Finds a site (the base of its variants) by name; NULL if none. */
CG_HIDDEN cg_site *cg_site_find(const char *name);
CG_HIDDEN cg_layer *cg_layer_for_name(const char *name);
/* Calls fn on the site named and every variant sharing its policy. Caller holds cg_cfg_lock. */
CG_HIDDEN int cg_site_each(const char *name, void (*fn)(cg_site *, void *), void *arg);
CG_HIDDEN int cg_is_callguard_object(const void *addr);
/* Is this layer loaded as its vendor library's soname shim? */
CG_HIDDEN int cg_layer_is_shim(const cg_layer *l);
CG_HIDDEN void cg_note_own_object(const void *addr);

/* ---- lock domains (domain.c) --------------------------------------------- */
#define CG_MAX_DOMAINS 64
#define CG_STRIPES 64
CG_HIDDEN int cg_domain_get(const char *name, cg_scope scope, uint32_t *id);
CG_HIDDEN const char *cg_domain_name(uint32_t id);
CG_HIDDEN void cg_domain_lock(uint32_t id, uint32_t scope, const void *key, uint64_t *wait_ns);
CG_HIDDEN void cg_domain_unlock(uint32_t id, uint32_t scope, const void *key);
CG_HIDDEN void cg_domains_after_fork_child(void);

/* ---- finding the real library (resolve.c) -------------------------------- */
CG_HIDDEN void *cg_resolve(cg_layer *layer, const char *name);

/* ---- adapters (adapter_cpython.c) ------------------------------------------ */
CG_HIDDEN const cg_adapter *cg_cpython_adapter_if_present(void);
CG_HIDDEN extern const cg_adapter cg_cpython_adapter;

typedef struct cg_py_api {
    _Atomic int state; /* 0: not looked up yet, 1: found, -1: no CPython in this process */
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    int (*gil_check)(void);
    void *(*save)(void);
    void (*restore)(void *);
} cg_py_api;
CG_HIDDEN extern cg_py_api cg_py;
CG_HIDDEN int cg_py_holds_slow(void);

/* Does this thread hold the GIL (and may it let go of it)? */
static inline int cg_py_holds(void)
{
    int st = atomic_load_explicit(&cg_py.state, memory_order_acquire);
    if (__builtin_expect(st == 0, 0)) return cg_py_holds_slow();
    return st > 0 && cg_py.is_initialized() && !cg_py.is_finalizing() && cg_py.gil_check();
}

/* ---- time ---------------------------------------------------------------- */
#include <time.h>
static inline uint64_t cg_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
