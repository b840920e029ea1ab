/* wait_args: the arguments a blocking call waits on (the policy key
 * wait_args, layer.h cg_wait_args), read from its thread's slot as text for
 * the hang page. */
#ifndef CGI_WAIT_ARGS_H
#define CGI_WAIT_ARGS_H

#include "internal.h"

#include "../common/stats_file.h"

/* Fills e->nargs and e->arg from the slot of the call numbered seq, counted
 * in `c`: only values its wrapper stored for that call (else none). On the
 * watchdog thread. */
CGI_HIDDEN void cgi_wait_args_fill(cgi_hang_call *e, cgi_slot *slot, uint64_t seq, const cg_counters *c);

#endif
