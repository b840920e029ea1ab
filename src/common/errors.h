/* Errors: every failing function returns a cg_status and leaves a one-line
 * message for cg_last_error(). */
#ifndef CGI_ERRORS_H
#define CGI_ERRORS_H

#include "common.h"
#include "message.h"

/* Sets this thread's message and returns status. */
CGI_HIDDEN int cgi_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A bad setting found at start-up: one line on stderr, exit status 2. */
CGI_HIDDEN void cgi_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
