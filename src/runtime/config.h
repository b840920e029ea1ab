/* The process-wide configuration every guarded call reads, and the lock
 * its writers hold (config.c). Data only: the threads' rules and the lock
 * domains below the sites read it without calling up to site.c, which
 * computes each site's path from it. */
#ifndef CGI_CONFIG_H
#define CGI_CONFIG_H

/* Calls in flight this long are recorded in the hang page by default. */
#define CGI_HANG_RECORD_NS 1000000000u

#include "internal.h"

typedef struct cgi_config {
    _Atomic int stats_on;
    _Atomic int path; /* CGI_PATH_*: which of cg_call's paths the configuration allows */
    _Atomic uint64_t stall_ns;
    const cg_adapter *_Atomic adapter;
    _Atomic int adapter_mode;
    _Atomic int trace_on;       /* CGI_TRACE_LINES | CGI_TRACE_TIMELINE (trace.h) */
    _Atomic int timing;         /* CGI_TIMING_* (stats.h): how the short paths' calls are timed */
    _Atomic uint64_t hang_ns;   /* CALLGUARD_HANG_MS in ns: hang reports on stderr; 0: none */
    _Atomic uint64_t record_ns; /* calls in flight this long go to the hang page (1 s, or CALLGUARD_HANG_MS); 0: off */
    _Atomic int modes_for;      /* what the sites' modes were computed for (site.c) */
} cgi_config;

CGI_HIDDEN extern cgi_config cgi_cfg;
/* Serializes every configuration change and layer registration. */
CGI_HIDDEN extern pthread_mutex_t cgi_cfg_lock;

#endif
