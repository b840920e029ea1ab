/* Writing a timeline as Chrome trace-event JSON (trace_write.c); merging a
 * `callguard run` directory's trace files is cg_trace_merge (callguard.h). */
#ifndef CGI_TRACE_WRITE_H
#define CGI_TRACE_WRITE_H

#include "../common/stats_file.h"
#include "../common/trace_file.h"

/* Writes one process's timeline to path: its rings v (no header: an empty
 * timeline), named from its statistics region r (CALLGUARD_TRACE at exit()). */
CGI_HIDDEN int cgi_trace_write_view(const char *path, const cgi_trace_view *v, const cgi_stats_region *r);

#endif
