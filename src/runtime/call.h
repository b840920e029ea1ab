/* The guarded call (call.c). */
#ifndef CGI_CALL_H
#define CGI_CALL_H

#include "internal.h"

/* At start-up: the key of each thread's record of what its call holds
 * (made before the statistics slots' key, so its destructor runs first). */
CGI_HIDDEN void cgi_call_init(void);
CGI_HIDDEN void cgi_call_after_fork_child(void);

#endif
