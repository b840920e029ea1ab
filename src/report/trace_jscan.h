/* A JSON scanner for traces (trace_jscan.c): each value is checked and
 * handed back as the span of its raw text, never decoded, so a merge can
 * copy what it does not change byte for byte. Numbers may have fractions
 * (a trace's microseconds); strings are checked, escapes included. */
#ifndef CGI_TRACE_JSCAN_H
#define CGI_TRACE_JSCAN_H

#include "../common/common.h"

#include <stddef.h>

/* Raw text: a string's without its quotes, any other value's whole. */
typedef struct cgi_jspan {
    const char *s, *e;
} cgi_jspan;

typedef struct cgi_jscan {
    const char *start, *s, *end;
    int err, depth;
    char msg[160]; /* the first failure: what was expected, at which byte */
} cgi_jscan;

/* Deeper than a trace's 3 levels, and bounded: a hostile file cannot exhaust the stack. */
#define CGI_JSCAN_MAX_DEPTH 16

/* Fails the scan with what was expected at the current byte (the first
 * failure is kept; every later call does nothing). */
CGI_HIDDEN void cgi_jscan_fail(cgi_jscan *j, const char *what);
/* 1 and past it when c comes next (after white space), else 0. */
CGI_HIDDEN int cgi_jscan_lit(cgi_jscan *j, char c);
/* The next character after white space (0 at the end or after a failure). */
CGI_HIDDEN char cgi_jscan_peek(cgi_jscan *j);
/* A string (its text without the quotes); 0 and failed when none comes. */
CGI_HIDDEN int cgi_jscan_str(cgi_jscan *j, cgi_jspan *out);
/* Any value, checked (a string's span keeps its quotes). */
CGI_HIDDEN int cgi_jscan_value(cgi_jscan *j, cgi_jspan *out);
/* {"key": value, ...}: fn reads each value (or cgi_jscan_value skips it). */
typedef void cgi_jscan_member_fn(cgi_jscan *j, cgi_jspan key, void *ctx);
CGI_HIDDEN void cgi_jscan_object(cgi_jscan *j, cgi_jscan_member_fn *fn, void *ctx);
/* [item, ...]: fn reads each item. */
typedef void cgi_jscan_item_fn(cgi_jscan *j, void *ctx);
CGI_HIDDEN void cgi_jscan_array(cgi_jscan *j, cgi_jscan_item_fn *fn, void *ctx);

/* Whether a span's text is s (a key, a name: no escapes compared). */
CGI_HIDDEN int cgi_jspan_is(cgi_jspan v, const char *s);
/* A whole number from 0 (no sign, fraction or exponent): 0, or -1. */
CGI_HIDDEN int cgi_jspan_u64(cgi_jspan v, uint64_t *out);
/* Microseconds with at most a fraction (a trace's ts) as nanoseconds,
 * digits past the third decimal dropped: 0, or -1. */
CGI_HIDDEN int cgi_jspan_us_ns(cgi_jspan v, uint64_t *out);

#endif
