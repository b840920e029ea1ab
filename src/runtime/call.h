/* The guarded call (call.c). */
#ifndef CGI_CALL_H
#define CGI_CALL_H

#include "internal.h"

CGI_HIDDEN void cgi_call_after_fork_child(void);

#endif
