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
} cgi_proc_view;

/* Writes a report of these processes to path ("-": stderr). */
CGI_HIDDEN int cgi_report_to(const char *path, const cgi_proc_view *procs, size_t n, cg_report_format format);

#endif
