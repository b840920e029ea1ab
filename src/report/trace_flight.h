/* The calls a process had in flight when it ended, as timeline events
 * (trace_flight.c; trace_write.c adds them to the process's timeline). A
 * ring records a call when it returns; one that never returned is found in
 * the statistics region's thread slots, since when it was in flight, and
 * its Python line on the hang page. */
#ifndef CGI_TRACE_FLIGHT_H
#define CGI_TRACE_FLIGHT_H

#include "../common/stats_file.h"
#include "../common/trace_file.h"

/* The longest event's text: every name escaped at 6 bytes a byte, and the
 * fixed text. */
#define CGI_FLIGHT_TEXT_MAX 4096

/* One call in flight: its thread (tid, name) and its complete event as
 * JSON text, {"ph":"X",...}, len bytes (no NUL). */
typedef void cgi_flight_fn(int32_t tid, const char *thread, const char *text, size_t len, void *ctx);

/* When the process of r ended, in clk's nanoseconds (CLOCK_MONOTONIC):
 * its watchdog's last look at the calls in flight (each millisecond while
 * one is); now where that is not known (the hang page off) or the process
 * is the caller (live: its own timeline at exit()). */
CGI_HIDDEN uint64_t cgi_trace_flight_end(const cgi_stats_region *r, const cgi_trace_clock *clk, int live);

/* Calls fn for each call in flight in r (process pid), in slot order: an
 * event from its entry to end_ns (a lock wait, `lock wait DOMAIN`, while
 * it waits for its site's lock, else the call), `in_flight` in its
 * category and `"in_flight": true` in its args. Returns how many; fn may
 * be NULL to count them. */
CGI_HIDDEN size_t cgi_trace_flights(const cgi_stats_region *r, const cgi_trace_clock *clk, uint64_t end_ns, int pid,
                                    cgi_flight_fn *fn, void *ctx);

#endif
