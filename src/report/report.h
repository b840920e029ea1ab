/* Reports from statistics regions: writing one (report.c, the map of the
 * files in internal.h), and a run's statistics directory listed and read
 * (stats_dir.c). What src/runtime and the CLI call of src/report. */
#ifndef CGI_REPORT_H
#define CGI_REPORT_H

#include "../common/stats_file.h"

#include <stdio.h>

typedef struct cgi_proc_view {
    const cgi_stats_region *region;
    int have_exit;  /* 1 when exit/state below is known from outside */
    int exit_state; /* CGI_PROC_* */
    int exit_status;
    int have_trace; /* 1: the process recorded a timeline; its events kept and dropped */
    uint64_t trace_events, trace_dropped;
} cgi_proc_view;

/* Is record k of p's region one its policy leaves uncounted (`count = no`)
 * that has no row? One counted all the same (serialized, leaving the
 * runtime) has its row; a process that recorded a timeline counted every
 * call. The JSON's "uncounted" and the text's line list these. */
static inline int cgi_left_uncounted(const cgi_proc_view *p, uint32_t k)
{
    const cgi_stats_record *r = &p->region->r[k];
    return (r->uncounted & CGI_UNCOUNTED) && (r->uncounted & CGI_UNCOUNTED_CALLED) && !p->have_trace &&
           cgi_ctr_calls(&r->c) == 0;
}

/* A report written one process at a time (report.c): each process is
 * written, and folded into the totals and the combined table, when it is
 * added; the caller may reuse its region right after. Memory grows only with
 * the distinct entry points and host names (the combined table). */
typedef struct cgi_report_writer cgi_report_writer;
/* Opens the report at path ("-": stderr; outfile.h says how). */
CGI_HIDDEN int cgi_report_begin(const char *path, cg_report_format format, cgi_report_writer **w);
/* The saved reports a report is read from (kept, not copied): the text's
 * advice names them in the command that shows all of it. */
CGI_HIDDEN void cgi_report_sources(cgi_report_writer *w, const char *const *paths, size_t n);
/* Keeps a `stuck` JSON object (len bytes: the view of a stuck job, from
 * cg_report_set_stuck or a saved report) for w, unless it has one already:
 * 0, or -1 when it is not one object or memory ran out. */
CGI_HIDDEN int cgi_report_keep_stuck(cgi_report_writer *w, const char *json, size_t len);
/* The processes not listed (no counted call) whose policy leaves entry
 * points uncounted (`count = no`): how many, the most entry points one
 * left, and the first few of its names ("not_counted"; the summary's
 * head when no process is listed). */
#define CGI_NOT_COUNTED_NAMES 3
typedef struct cgi_not_counted {
    uint64_t processes, entry_points;
    size_t nnames;
    char names[CGI_NOT_COUNTED_NAMES][CGI_NAME_MAX];
} cgi_not_counted;

/* Adds a saved report's "not_counted". */
CGI_HIDDEN void cgi_report_not_counted(cgi_report_writer *w, const cgi_not_counted *nc);
/* How a run's processes ended (kept, not copied), those that made no
 * guarded call included: the text says so when none made one. */
CGI_HIDDEN void cgi_report_exits(cgi_report_writer *w, const cg_proc_exit *exits, size_t n);
/* Adds one process (not listed when it made no guarded call). */
CGI_HIDDEN void cgi_report_add(cgi_report_writer *w, const cgi_proc_view *p);
/* Writes the totals and closes the report; frees w. lost: processes of the
 * run that left no statistics (said in the report when > 0). */
CGI_HIDDEN int cgi_report_end(cgi_report_writer *w, size_t lost);

/* Writes a report of these processes to path: begin, add each, end. */
CGI_HIDDEN int cgi_report_to(const char *path, const cgi_proc_view *procs, size_t n, size_t lost,
                             cg_report_format format);

/* A quirk as its file says it, for the report's advice (quirks.c). Its
 * sites are "a, b, c:shared": an entry point of its `shared` list has this
 * suffix (taken shared in the quirk's domain, docs/quirks.md). */
#define CGI_QUIRK_SHARED ":shared"
typedef struct cgi_quirk_view {
    const char *name, *api, *sites, *domain, *source, *why;
    const char *versions, *library, *driver; /* library, driver: NULL when the quirk has none */
    const uint32_t *vendor;
    unsigned nvendors;
    const char *advice; /* an advice-only quirk's: what to do, no lock being the fix; else NULL */
    int once;           /* its fix holds until each entry point's first success (scope = once) */
    int handle;         /* its fix locks each first input handle apart (scope = handle) */
} cgi_quirk_view;
/* Calls fn for each quirk of the quirks file in use that serializes entry
 * point `name` (cgi_quirks_naming, set at start-up); NULL: no advice. */
typedef void cgi_quirks_naming_fn(const char *name, void (*fn)(const cgi_quirk_view *, void *), void *arg);
CGI_HIDDEN extern cgi_quirks_naming_fn *cgi_report_quirks;

/* How the timeline's events of entry point `name` of API `api` carry their
 * arguments (layer.h, cg_args), and the API's names of result codes, from
 * the layers loaded in this process (cgi_site_args_named, set at start-up
 * as cgi_report_quirks is); NULL where none is loaded: the events are
 * then written without their arguments. */
struct cg_args;
typedef const struct cg_args *cgi_args_named_fn(const char *api, const char *name, const char *(**result_name)(long));
CGI_HIDDEN extern cgi_args_named_fn *cgi_report_args;

/* One statistics file of a `callguard run` directory, as its header said
 * when the directory was listed: about 100 bytes a process are kept. */
typedef struct cgi_stats_entry {
    char *name; /* in the directory */
    int32_t pid;
    uint64_t start_unix_ns;
    cgi_proc_view how; /* how it ended, its trace counts; region NULL */
} cgi_stats_entry;

/* Lists the statistics files of dir (cg-*.stats) in start order, by their
 * headers, with how each process ended as far as the files and exits say,
 * and its trace counts. A missing dir is an empty list. *cut (NULL: not
 * wanted): files with a header but cut short, each said on stderr. *out is
 * malloc'd; free with cgi_stats_list_free. */
CGI_HIDDEN int cgi_stats_list_dir(const char *dir, const cg_proc_exit *exits, size_t nexits, cgi_stats_entry **out,
                                  size_t *n, size_t *cut);
CGI_HIDDEN void cgi_stats_list_free(cgi_stats_entry *v, size_t n);
/* The entry of a process (pid and start), or NULL; v is in start order. */
CGI_HIDDEN cgi_stats_entry *cgi_stats_find(cgi_stats_entry *v, size_t n, int32_t pid, uint64_t start_unix_ns);
/* Reads an entry's file into r (by pread, never a mapping) and checks it
 * field by field; 0, or -1 after one line on stderr saying which file could
 * not be read and why (cut short, replaced, not a statistics file). */
CGI_HIDDEN int cgi_stats_read_entry(const char *dir, const cgi_stats_entry *e, cgi_stats_region *r);
/* Reads len bytes at off (on EINTR and short reads, again); the bytes
 * read: fewer when the file ends there (or an error). */
CGI_HIDDEN size_t cgi_pread_full(int fd, void *buf, size_t len, off_t off);
/* One statistics file from fd into r, checked field by field: 0, or -1
 * with why (one line). Reads the header, the records in use, and the
 * stalls and slots; the other records of r are left as they were. */
CGI_HIDDEN int cgi_stats_read_fd(int fd, cgi_stats_region *r, char *why, size_t cap);

#endif
