/* Writing reports from statistics regions (report.c); merging and reading
 * them back is report_merge.c. */
#ifndef CGI_REPORT_H
#define CGI_REPORT_H

#include "stats.h"

typedef struct cgi_proc_view {
    const cgi_stats_region *region;
    int have_exit;       /* 1 when exit/state below is known from outside */
    int exit_state;      /* CGI_PROC_* */
    int exit_status;
    int have_trace;      /* 1: the process recorded a timeline; its events kept and dropped */
    uint64_t trace_events, trace_dropped;
} cgi_proc_view;

/* Writes a report of these processes to path ("-": stderr). lost: processes
 * of the run that left no statistics file (said in the report when > 0). */
CGI_HIDDEN int cgi_report_to(const char *path, const cgi_proc_view *procs, size_t n, size_t lost,
                             cg_report_format format);

/* Maps the statistics files of a `callguard run` directory (cg-*.stats),
 * in start order, with how each process ended as far as the files and
 * exits say, and its trace counts. *out is malloc'd; free with
 * cgi_stats_unmap_dir. */
CGI_HIDDEN int cgi_stats_map_dir(const char *dir, const cg_proc_exit *exits, size_t nexits, cgi_proc_view **out,
                                 size_t *n);
CGI_HIDDEN void cgi_stats_unmap_dir(cgi_proc_view *v, size_t n);

#endif
