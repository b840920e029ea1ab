/* Reading a timeline: a process's own, or a trace file's (the layout:
 * src/common/trace_file.h). */
#ifndef CGI_TRACE_READ_H
#define CGI_TRACE_READ_H

#include "../common/trace_file.h"

/* 1 when the first `size` bytes read of a file are a trace file's header
 * and thread table, of this version. */
CGI_HIDDEN int cgi_trace_header_ok(const void *head, size_t size);

/* Events kept and left out (dropped) in a view: each thread's recorded
 * less those a bound or a full disk left out, and the threads' past the
 * table's. */
CGI_HIDDEN void cgi_trace_count(const cgi_trace_view *v, uint64_t *kept, uint64_t *dropped);

/* A thread's name, NUL-terminated, into out[17]. */
CGI_HIDDEN void cgi_trace_thread_name(const cgi_trace_thread *t, char out[17]);

/* The view of a trace file from its header and thread table read into
 * head (size bytes of them), its chunks to be read from fd: 0, or -1 when
 * it is not a trace file of this version. */
CGI_HIDDEN int cgi_trace_view_of_file(const void *head, size_t size, int fd, cgi_trace_view *v);

#endif
