/* The report of a whole process tree: `callguard run` leaves one
 * statistics file per process in a directory; cg_report_merge reads them
 * one at a time into one region and writes one report as it goes. */
#define _GNU_SOURCE
#include "report.h"

#include "../common/errors.h"

#include <stdlib.h>

int cg_report_merge(const char *dir, const cg_proc_exit *exits, size_t nexits, const char *path,
                    cg_report_format format)
{
    cgi_stats_entry *v;
    size_t n, lost;
    /* lost: files cut short, and the processes whose storage was full,
     * read-only or removed (each counted in memory, said so, and counted by
     * the CLI: stats.h). A process without a file made no guarded call. */
    int rc = cgi_stats_list_dir(dir, exits, nexits, &v, &n, &lost);
    if (rc != CG_OK) return rc;
    cgi_stats_region *r = calloc(1, sizeof *r);
    cgi_report_writer *w = NULL;
    if (!r)
        rc = cgi_fail(CG_ENOMEM, "out of memory");
    else
        rc = cgi_report_begin(path, format, &w);
    if (rc == CG_OK) {
        cgi_report_exits(w, exits, nexits);
        for (size_t i = 0; i < n; i++) {
            /* A file that cannot be read now (cut short, replaced) is said
             * and counted; the others are reported. */
            if (cgi_stats_read_entry(dir, &v[i], r) != 0) {
                lost++;
                continue;
            }
            cgi_proc_view p = v[i].how;
            p.region = r;
            cgi_report_add(w, &p);
        }
        rc = cgi_report_end(w, lost);
    }
    free(r);
    cgi_stats_list_free(v, n);
    return rc;
}
