/* Errors: the per-thread message, status names, and the start-up exit. */
#define _GNU_SOURCE
#include "errors.h"

#include <unistd.h>

static __thread char cgi_err[512];

/* Messages are one line, and print no terminal control: a value with a
 * newline or an escape in it is shown as \n or \x1b. */
void cgi_one_line(char *dst, size_t cap, const char *src)
{
    size_t n = 0;
    for (; *src && n + 5 < cap; src++) {
        unsigned char c = (unsigned char)*src;
        if (c == '\n') dst[n++] = '\\', dst[n++] = 'n';
        else if (c == '\t') dst[n++] = '\\', dst[n++] = 't';
        else if (c < 0x20 || c == 0x7f) n += (size_t)snprintf(dst + n, cap - n, "\\x%02x", c);
        else dst[n++] = (char)c;
    }
    if (cap) dst[n < cap ? n : cap - 1] = '\0';
}

int cgi_fail(int status, const char *fmt, ...)
{
    char raw[sizeof cgi_err];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    cgi_one_line(cgi_err, sizeof cgi_err, raw);
    return status;
}

const char *cg_last_error(void) { return cgi_err; }

const char *cg_status_name(int status)
{
    switch (status) {
    case CG_PENDING: return "CG_PENDING";
    case CG_OK: return "CG_OK";
    case CG_EINVAL: return "CG_EINVAL";
    case CG_ENOENT: return "CG_ENOENT";
    case CG_EIO: return "CG_EIO";
    case CG_ENOMEM: return "CG_ENOMEM";
    case CG_EFORMAT: return "CG_EFORMAT";
    default: return "unknown status";
    }
}

void cgi_die(const char *fmt, ...)
{
    char raw[700], line[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    cgi_one_line(line, sizeof line, raw);
    fprintf(stderr, "callguard: %s\n", line);
    _exit(2);
}
