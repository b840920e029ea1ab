/* What a process of a saved report lists besides its sites, read back
 * into its region (report_lists.c): its stalls, calls in flight, quirks
 * matched, thread-rule violations, hang report and late calls. A list's
 * reader takes one item into the next free entry, n counting them; an
 * item past what a region keeps is read and dropped (quirks, violations
 * and late calls: counted as dropped). report_read.c reads the rest of the
 * report schema. */
#ifndef CGI_REPORT_LISTS_H
#define CGI_REPORT_LISTS_H

#include "json_lex.h"
#include "report.h"

CGI_HIDDEN void cgi_read_stall(cgi_json *j, cgi_stats_region *r, unsigned *n);
CGI_HIDDEN void cgi_read_quirk(cgi_json *j, cgi_stats_region *r, unsigned *n);
CGI_HIDDEN void cgi_read_violation(cgi_json *j, cgi_stats_region *r, unsigned *n);

/* A call in flight of a saved report; its site is found once all sites are read. */
typedef struct cgi_read_flight {
    char api[CGI_API_NAME_MAX], name[CGI_NAME_MAX];
} cgi_read_flight;

CGI_HIDDEN void cgi_read_in_flight(cgi_json *j, cgi_stats_region *r, cgi_read_flight *names, unsigned *n);
/* Points each call in flight at the record of its site (one is made for a
 * site the report does not list). */
CGI_HIDDEN void cgi_link_in_flight(cgi_stats_region *r, const cgi_read_flight *names, unsigned n);

/* "hang": null, or the process's last hang report. */
CGI_HIDDEN void cgi_read_hang(cgi_json *j, cgi_hang_page *pg);
/* One of "late_calls", into the next free entry of the late page; each
 * one read is counted there (as "late_calls_dropped" is added). */
CGI_HIDDEN void cgi_read_late(cgi_json *j, cgi_late_page *lp, unsigned *n);

#endif
