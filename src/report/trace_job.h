/* A job's timeline (trace_job.c): the traces of its processes, one file
 * each as `--trace DIR/` writes them on every host, merged into one
 * Chrome trace-event JSON on one clock. Compiled into the CLI
 * (`callguard trace`), not libcallguard. */
#ifndef CGI_TRACE_JOB_H
#define CGI_TRACE_JOB_H

#include "../common/common.h"

#include <stddef.h>

/* What a merge found, for the line the CLI prints. */
typedef struct cgi_job_totals {
    size_t files, processes, hosts, clocks;
    uint64_t events;
    uint64_t uncertainty_ns; /* the most two processes' times can be off by, from the clock pairs alone */
} cgi_job_totals;

/* The per-process traces among inputs (files, and folders for their
 * *.json files) merged into out (outfile.h: "-" is stdout). Returns 0; 1
 * when an input is not such a trace or out cannot be written, with why
 * in err (one line that names the file). */
CGI_HIDDEN int cgi_trace_job(const char *const *inputs, size_t n, const char *out, cgi_job_totals *t, char *err,
                             size_t cap);

#endif
