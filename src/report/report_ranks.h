/* A job's entry points across its ranks (report_ranks.c), for the report
 * writer: it hands over each process that has a rank, the counts of each
 * entry point it called and its stalls, and at the end gets one summary per
 * entry point. No output here: the writer writes JSON and the table. */
#ifndef CGI_REPORT_RANKS_H
#define CGI_REPORT_RANKS_H

#include "../common/stats_file.h"

#include <stddef.h>
#include <stdint.h>

typedef struct cgi_ranks cgi_ranks;

/* Where a figure was: the rank and its host (the host of its first process). */
typedef struct cgi_rank_where {
    uint32_t rank;
    const char *host;
} cgi_rank_where;

/* One figure over the ranks: each rank's sum over its processes, a rank
 * that never called the entry point counting 0. median: the middle value,
 * or for an even number of ranks the mean of the two middle ones, rounded
 * down. max_at: the rank with the max (the lowest rank number among equals). */
typedef struct cgi_rank_spread {
    uint64_t min, median, max;
    cgi_rank_where max_at;
} cgi_rank_spread;

typedef struct cgi_rank_site {
    size_t row;     /* the writer's row (entry point) */
    uint32_t ranks; /* ranks that called it */
    uint64_t calls, total_ns;
    cgi_rank_spread calls_per_rank, ns_per_rank;
    uint32_t peak_inside, peak_waiting; /* the most of any one process with a rank; 0: not measured */
    cgi_rank_where peak_inside_at, peak_waiting_at;
    uint64_t stall_ns; /* the longest stall kept by a process with a rank; 0: none */
    cgi_rank_where stall_at;
    /* The count most ranks made, and the ranks that made another, the
     * lowest rank numbers first: for a collective, a rank out of step.
     * no_usual: two counts are equally common (two ranks, 10 and 9), so
     * which rank is out of step is unknown: every rank is listed and
     * usual_calls means nothing. */
    uint64_t usual_calls;
    uint8_t no_usual;
    uint32_t nodd; /* all of them; the first CGI_RANKS_ODD_KEPT below */
    cgi_rank_where odd[4];
    uint64_t odd_calls[4];
} cgi_rank_site;
#define CGI_RANKS_ODD_KEPT 4

/* NULL: out of memory. */
CGI_HIDDEN cgi_ranks *cgi_ranks_new(void);
CGI_HIDDEN void cgi_ranks_free(cgi_ranks *v);
/* A process of the report: its rank (r's header) and host (a string that
 * lives as long as v). Returns the index to pass below, CGI_RANKS_NONE for
 * a process without a rank (counted apart), or CGI_RANKS_OOM. */
#define CGI_RANKS_NONE UINT32_MAX
#define CGI_RANKS_OOM (UINT32_MAX - 1)
CGI_HIDDEN uint32_t cgi_ranks_process(cgi_ranks *v, const cgi_stats_header *h, const char *host);
/* An entry point (the writer's row) the process of rank index ix called;
 * 0, or -1 when out of memory. */
CGI_HIDDEN int cgi_ranks_site(cgi_ranks *v, uint32_t ix, size_t row, const cg_counters *c);
/* A row compared among the ranks that have it, not all ranks (a row of one
 * communicator's calls, "NAME@ID": layer.h, cg_site_row); 0 or -1. */
CGI_HIDDEN int cgi_ranks_members_only(cgi_ranks *v, size_t row);
/* A stall that process kept at that entry point; 0 or -1. */
CGI_HIDDEN int cgi_ranks_stall(cgi_ranks *v, uint32_t ix, size_t row, uint64_t ns);

/* The ranks, their distinct hosts, and the processes without a rank. */
CGI_HIDDEN void cgi_ranks_counts(const cgi_ranks *v, size_t *ranks, size_t *hosts, size_t *unranked);
/* After the last process: a rank's processes added up, and the memory the
 * medians need taken; 0, or -1 when out of memory. */
CGI_HIDDEN int cgi_ranks_finish(cgi_ranks *v);
/* Calls fn for each entry point a process with a rank called, in the
 * writer's row order (after cgi_ranks_finish). */
CGI_HIDDEN void cgi_ranks_each(const cgi_ranks *v, void (*fn)(const cgi_rank_site *, void *), void *arg);
/* The summary of one entry point (the writer's row), as cgi_ranks_each
 * gives it; 0 when no process with a rank called it. */
CGI_HIDDEN int cgi_ranks_one(const cgi_ranks *v, size_t row, cgi_rank_site *s);

#endif
