/* Recording a stall (stall.c): who stalled, for how long, holding which
 * runtime, and from where in the program's own code. */
#ifndef CGI_STALL_H
#define CGI_STALL_H

#include "internal.h"
#include "stats.h"

/* Called by the thread that stalled, right after the call, still holding
 * the runtime `held`. entered: ticks when the call entered. */
CGI_HIDDEN void cgi_stall_record(const cg_site *s, const cg_adapter *held, uint64_t entered, uint64_t call_ns,
                                 uint64_t wait_ns);

/* Notes in the slot the Python line of the call numbered seq, about to
 * enter, for the watchdog's hang reports. The thread holds the GIL. */
CGI_HIDDEN void cgi_where_note(cgi_slot *slot, uint64_t seq);

#endif
