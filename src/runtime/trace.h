/* The timeline (trace.c records, src/report/trace_write.c writes Chrome JSON).
 *
 * Each thread that makes a guarded call gets a ring of CGI_TRACE_EVENTS
 * events (32 bytes each: 2 MiB per thread); a full ring overwrites its
 * oldest events, which are counted as dropped. Under `callguard run`
 * (CALLGUARD_STATS_DIR set) the rings are shared mappings of one file per
 * process in that directory (trace_file.h), so what a process recorded is
 * in the file the moment it is recorded: abort(), _exit() and exec() lose
 * nothing, and the CLI merges the files of the whole tree into one trace.
 * In a process on its own (CALLGUARD_TRACE alone) the rings are private
 * memory, written out as JSON by exit(). */
#ifndef CGI_TRACE_H
#define CGI_TRACE_H

#include "site.h"
#include "stats.h"
#include "../common/trace_file.h"

/* CALLGUARD_TRACE=FILE: the JSON timeline. Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_trace_set_file(const char *path);
/* CALLGUARD_TRACE_LINES=FILE|-: one text line per call. Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_trace_set_lines(const char *path);
/* Records one timed call (cg_call, only when cgi_cfg.trace_on): the site's
 * statistics record, when it entered the driver (ticks), its time there and
 * its lock wait (ns); held: made with the host runtime held. Returns 0 (so
 * the call path can end in it). */
CGI_HIDDEN int cgi_trace_call(cg_counters *c, uint64_t t0, uint64_t call_ns, uint64_t wait_ns, int err, int held);
CGI_HIDDEN void cgi_trace_after_fork_child(void);
/* This process's rings (in-process writing and reports). */
CGI_HIDDEN void cgi_trace_self_view(cgi_trace_view *v);

#endif
