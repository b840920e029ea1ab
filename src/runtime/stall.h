/* Recording a stall (stall.c): who stalled, for how long, holding which
 * runtime, and from where in the program's own code. */
#ifndef CGI_STALL_H
#define CGI_STALL_H

#include "internal.h"

/* Called by the thread that stalled, right after the call, still holding
 * the runtime `held`. entered: ticks when the call entered. */
CGI_HIDDEN void cgi_stall_record(const cg_site *s, const cg_adapter *held, uint64_t entered, uint64_t call_ns,
                                 uint64_t wait_ns);

#endif
