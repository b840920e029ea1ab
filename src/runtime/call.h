/* The general path of a guarded call (call.c): cg_call. */
#ifndef CGI_CALL_H
#define CGI_CALL_H

#include "internal.h"

/* The forking thread is in no call in the child. */
CGI_HIDDEN void cgi_call_after_fork_child(void);

#endif
