/* Making the statistics file of an ended process small (stats_settle.c),
 * for `callguard run`. */
#ifndef CGI_STATS_SETTLE_H
#define CGI_STATS_SETTLE_H

#include "../common/stats_file.h"

/* The file `name` of directory dfd, if it is a statistics file no process
 * can write any more: its pages the report does not read are punched out,
 * or the file is deleted when its process made no guarded call. r: a
 * buffer for the file. Returns 1 (made small), 2 (deleted) or 0 (not a
 * statistics file, still written, or done before). */
CGI_HIDDEN int cgi_stats_settle(int dfd, const char *name, cgi_stats_region *r);

#endif
