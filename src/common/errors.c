/* Errors: the per-thread message, status names, and the start-up exit. */
#define _GNU_SOURCE
#include "errors.h"

#include <stdio.h>
#include <unistd.h>

static __thread char cgi_err[512];

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
    va_list ap;
    va_start(ap, fmt);
    cgi_vsay(fmt, ap);
    va_end(ap);
    _exit(2);
}
