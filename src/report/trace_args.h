/* A timeline event's arguments as JSON (trace_args.c), for trace_write. */
#ifndef CGI_TRACE_ARGS_H
#define CGI_TRACE_ARGS_H

#include "../common/trace_file.h"

#include <callguard/layer.h>

/* Writes at o, after an event's fixed `args` members, its arguments by
 * their header names and its result, from its words w (flags fl: how many,
 * which outputs were read; layout: trace_file.h) as the site's table `a`
 * says; result codes named by result_name (may be NULL). Words that do not
 * fit the table (another build of the layer) are left out. At most
 * (CGI_TRACE_WORDS_MAX + 2) * CGI_TJ_ARG_MAX bytes. Returns the end. */
CGI_HIDDEN char *cgi_o_args(char *o, const cg_args *a, const char *(*result_name)(long), uint32_t fl,
                            const uint64_t *w);
/* The longest argument's text: its name (at most 64 bytes kept) and its
 * value (a string of CGI_TRACE_STR_MAX bytes escaped to 6 bytes a byte,
 * or a name of at most 64 bytes, or a number). */
#define CGI_TJ_ARG_MAX (16 + 64 + 6 * CGI_TRACE_STR_MAX + 16)

#endif
