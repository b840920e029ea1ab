/* One-line messages on stderr (message.c): the runtime's and the CLI's. */
#ifndef CGI_MESSAGE_H
#define CGI_MESSAGE_H

#include <stdarg.h>
#include <stddef.h>

#ifndef CGI_HIDDEN
#define CGI_HIDDEN __attribute__((visibility("hidden")))
#endif

/* src as one line without terminal control: \n, \t, \x1b for the bytes
 * that would move the cursor, recolour or be no UTF-8. Async-signal-safe. */
CGI_HIDDEN void cgi_one_line(char *dst, size_t cap, const char *src);
/* "callguard: MESSAGE\n" on stderr, MESSAGE made one line by cgi_one_line. */
CGI_HIDDEN void cgi_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
CGI_HIDDEN void cgi_vsay(const char *fmt, va_list ap);

#endif
