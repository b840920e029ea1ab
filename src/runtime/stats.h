/* The statistics region (stats.c).
 * One region per process, laid out so another process (the CLI) can read it:
 * a header page, then fixed-size records. When CALLGUARD_STATS_DIR names a
 * directory the region is a shared mapping of a file there, so counts
 * survive abort(), _exit() and exec(). */
#ifndef CGI_STATS_H
#define CGI_STATS_H

#include "internal.h"

#define CGI_STATS_MAGIC "CGSTATS"
/* 2: the API name has CGI_API_NAME_MAX bytes (8 in version 1). */
#define CGI_STATS_VERSION 2
#define CGI_STATS_MAX_RECORDS 4096
/* Longest API name a layer may have, with its NUL. */
#define CGI_API_NAME_MAX 32

/* Named in layer.h (a site points at its counters), defined here. */
typedef struct cg_counters {
    _Atomic uint64_t calls, nested, errors, total_ns, max_ns, lock_wait_ns, stalls, stall_ns;
} cg_counters;

typedef struct cgi_stats_record {
    char api[CGI_API_NAME_MAX];
    char name[CGI_NAME_MAX];
    char domain[CGI_DOMAIN_NAME_MAX]; /* "" when not serialized */
    uint8_t transition, scope, blocking, used;
    uint32_t reserved;
    cg_counters c;
    char pad[256 - CGI_API_NAME_MAX - CGI_NAME_MAX - CGI_DOMAIN_NAME_MAX - 8 - sizeof(cg_counters)];
} cgi_stats_record;

enum { CGI_PROC_RUNNING = 0, CGI_PROC_EXITED = 1, CGI_PROC_SIGNALED = 2, CGI_PROC_EXECED = 3 };

typedef struct cgi_stats_header {
    char magic[8];
    uint32_t version;
    uint32_t max_records;
    _Atomic uint32_t nrecords;
    int32_t pid;
    int32_t ppid;
    _Atomic int32_t state;  /* CGI_PROC_* as the process itself saw it */
    int32_t status;         /* exit status or signal number */
    uint32_t reserved;
    uint64_t start_unix_ns;
    char command[2048];     /* argv joined by spaces */
    char host[64];          /* gethostname() at start: pids repeat across the nodes of one job */
    char pad[4096 - 8 - 4 * 8 - 8 - 2048 - 64];
} cgi_stats_header;

typedef struct cgi_stats_region {
    cgi_stats_header h;
    cgi_stats_record r[CGI_STATS_MAX_RECORDS];
} cgi_stats_region;

CGI_HIDDEN extern cgi_stats_region *cgi_stats;
CGI_HIDDEN int cgi_stats_init(const char *dir);
CGI_HIDDEN void cgi_stats_after_fork_child(void);
/* The record of a site (one per api and name). Caller holds cgi_cfg_lock. */
CGI_HIDDEN cg_counters *cgi_stats_record_site(const char *api, const char *name);
/* Mirrors a site's policy into its record so reports show it. Caller holds cgi_cfg_lock. */
CGI_HIDDEN void cgi_stats_note_policy(cg_site *s);

#endif
