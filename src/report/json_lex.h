/* A small JSON lexer for reading saved reports (json_lex.c): objects,
 * arrays, strings, integers, true/false/null. Anything else, or anything
 * missing, is an error naming what was expected where; the first error is
 * kept and every later call does nothing. Below it, the two shapes the
 * report reader walks (report_read.c, report_lists.c). */
#ifndef CGI_JSON_LEX_H
#define CGI_JSON_LEX_H

#include "../common/common.h"

#include <stdio.h>

typedef struct cgi_json {
    const char *s, *end;
    int err;
    int depth; /* of cgi_lex_skip's recursion: bounded, a hostile file cannot exhaust the stack */
    char msg[256];
} cgi_json;

/* Deeper than any report (4 levels): refused. */
#define CGI_JSON_MAX_DEPTH 32

/* Fails j with what (the first failure is kept). */
CGI_HIDDEN void cgi_lex_fail(cgi_json *j, const char *what);
/* Skips white space. */
CGI_HIDDEN void cgi_lex_ws(cgi_json *j);
/* 1 and past it when c comes next, else 0. */
CGI_HIDDEN int cgi_lex_lit(cgi_json *j, char c);
/* cgi_lex_lit, failing when c does not come. */
CGI_HIDDEN int cgi_lex_expect(cgi_json *j, char c);
/* A string into out (cap bytes, NUL-terminated; out NULL: skipped): JSON's
 * escapes decoded, \\u escapes as UTF-8, then a control character (\\r,
 * \\b, \\f, \\n, \\t too) becomes '?'. An escape JSON does not have
 * (\\q) fails, j->s at its backslash. */
CGI_HIDDEN int cgi_lex_str(cgi_json *j, char *out, size_t cap);
/* A whole number (callguard writes no fraction and no exponent). */
CGI_HIDDEN int cgi_lex_num(cgi_json *j, int64_t *out);
/* A count: a whole number from 0; a failure names key. */
CGI_HIDDEN int cgi_lex_count(cgi_json *j, const char *key, uint64_t *out);
/* 1 and past it when the word w comes next (true, false, null). */
CGI_HIDDEN int cgi_lex_word(cgi_json *j, const char *w);
/* Skips any value (for keys the reader does not need). */
CGI_HIDDEN void cgi_lex_skip(cgi_json *j);

/* ---- the reader's two shapes: an array of items, an object of members ---- */

typedef void cgi_item_fn(cgi_json *j, void *ctx);
/* The members' keys are at most this long; a longer key is an error. */
#define CGI_READ_KEY_MAX 32
typedef void cgi_member_fn(cgi_json *j, const char *key, void *ctx);

/* [item, ...]: fn reads each item. */
CGI_HIDDEN void cgi_read_array(cgi_json *j, cgi_item_fn *fn, void *ctx);
/* {"key": value, ...}: fn reads each value (or skips it). */
CGI_HIDDEN void cgi_read_object(cgi_json *j, cgi_member_fn *fn, void *ctx);

/* true or false (anything else: false, and the lexer's error). */
static inline int cgi_read_bool(cgi_json *j) { return cgi_lex_word(j, "true") ? 1 : (cgi_lex_word(j, "false"), 0); }

#endif
