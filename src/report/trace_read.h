/* Reading a timeline's rings (trace_read.c): a process's own, or a trace
 * file's (the layout: src/runtime/trace_file.h). */
#ifndef CGI_TRACE_READ_H
#define CGI_TRACE_READ_H

#include "../common/trace_file.h"

/* Events kept and dropped in a view. */
CGI_HIDDEN void cgi_trace_count(const cgi_trace_view *v, uint64_t *kept, uint64_t *dropped);

/* A thread's name, NUL-terminated, into out[17]. */
CGI_HIDDEN void cgi_trace_thread_name(const cgi_trace_thread *t, char out[17]);

/* The view of a trace file's bytes (a statistics directory's cg-*.trace),
 * size of them at map: 0, or -1 when it is not a trace file of this
 * version. Rings lie only where map holds all of them: given the header and
 * the thread table alone (the trace merge reads them by pread), none. */
CGI_HIDDEN int cgi_trace_view_of_file(const void *map, size_t size, cgi_trace_view *v);

#endif
