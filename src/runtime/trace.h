/* The timeline (trace.c records, src/report/trace_write.c writes Chrome JSON).
 *
 * Each thread that makes a guarded call writes its events into chunks of
 * one file per process (trace_file.h), one chunk mapped at a time: a full
 * chunk is unmapped and the next one appended, so the file keeps every
 * event (the kernel writes the pages out; nothing on the call path waits
 * for the disk). CALLGUARD_TRACE_MAX bounds the file: the thread's oldest
 * chunk is reused (the latest events kept) or the thread keeps no more
 * (the first), and the events left out are counted. An event is its head
 * (32 bytes) and, from the general path, its call's arguments and result
 * read from the wrapper's frame (layer.h, cg_args). Under `callguard run`
 * (CALLGUARD_STATS_DIR set) the file is in that directory, so what a
 * process recorded is there the moment it is recorded: abort(), _exit() and
 * exec() lose nothing, and the CLI merges the files of the whole tree into
 * one trace. In a process on its own (CALLGUARD_TRACE alone) the file is
 * an unlinked one, written out as JSON by exit(). */
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
/* The same from the general path, with the call's frame: its arguments go
 * with the event where the site has them (cg_args) and they are on. */
CGI_HIDDEN int cgi_trace_call_frame(const cg_site *s, const void *frame, uint64_t t0, uint64_t call_ns,
                                    uint64_t wait_ns, int err, int held);
/* The same for a call whose layer made the event's words itself (layer_args.h,
 * cg_leave_args): `flags` CGI_EV_ERROR and CGI_EV_HELD where they apply and
 * the outputs' bits (CGI_EV_OUTS). */
CGI_HIDDEN int cgi_trace_words(cg_counters *c, uint64_t t0, uint64_t call_ns, uint32_t flags, const uint64_t *w,
                               unsigned n);
/* The same after a code other than success (cg_leave_args_code): the outputs, which the layer left unread,
 * read by the site's table `a` where the code is a state. */
CGI_HIDDEN int cgi_trace_words_code(const cg_args *a, cg_counters *c, uint64_t t0, uint64_t call_ns, uint32_t flags,
                                    const uint64_t *w, unsigned n);
/* CALLGUARD_TRACE_MAX=SIZE[:latest|:first]: each process's trace file at
 * most about SIZE, keeping its latest or its first events. */
CGI_HIDDEN int cgi_trace_set_max(const char *value);
/* The arguments' table of entry point `name` of a loaded layer of `api`,
 * and its layer's names of result codes (query.c; the report's
 * cgi_report_args). */
CGI_HIDDEN const cg_args *cgi_site_args_named(const char *api, const char *name, const char *(**result_name)(long));
CGI_HIDDEN void cgi_trace_after_fork_child(void);
/* This process's rings (in-process writing and reports). */
CGI_HIDDEN void cgi_trace_self_view(cgi_trace_view *v);

#endif
