/* The names of the files callguard makes, each spelled here once: one
 * function makes a name, one parses it, for every pattern.
 *
 * A process's own files, in the statistics or trace directory of its run
 * (the runtime writes them; the report and `callguard status` find them):
 *     cg-PID-STAMP.stats    its statistics (stats_file.h)
 *     cg-PID-STAMP.trace    its timeline's rings (trace_file.h)
 * STAMP: CLOCK_MONOTONIC in ns when the file was made (an exec'd image
 * keeps its pid and makes a newer file).
 *
 * A job's files, in a folder the user named (`run --report DIR/`,
 * `--trace DIR/`), one per process, so that the ranks of a job on many
 * hosts can share one folder:
 *     callguard-HOST[-rankR]-pidP[-K].json   a process's report
 *     trace-HOST[-rankR]-pidP[-K].json       a process's timeline
 *     .callguard-HOST-pidP.live              the note of a run alive (run_folder.c)
 *     .callguard-HOST-stuck.lease            which run of HOST speaks for a stuck job (run_stuck.c)
 *     .callguard-HOST-stuck.note             HOST's stuck ranks, for the other hosts (run_stuck.c)
 * no rank part where no launcher named one; K from 2 when the name is
 * taken. HOST is the host's name as a part of a file name
 * (cgi_host_part): characters other than letters, digits, '.', '-' and
 * '_' become '_', and so does the '-' of a "-rankN" at its end, which
 * would read as the rank part: every name parses back to what made it. */
#ifndef CGI_FILE_NAMES_H
#define CGI_FILE_NAMES_H

#include "common.h"

#include <stdint.h>
#include <sys/types.h>

typedef enum cgi_file_kind {
    CGI_FILE_STATS,  /* cg-PID-STAMP.stats */
    CGI_FILE_RINGS,  /* cg-PID-STAMP.trace */
    CGI_FILE_REPORT, /* callguard-HOST[-rankR]-pidP[-K].json */
    CGI_FILE_TRACE,  /* trace-HOST[-rankR]-pidP[-K].json */
    CGI_FILE_LIVE,   /* .callguard-HOST-pidP.live */
    CGI_FILE_LEASE,  /* .callguard-HOST-stuck.lease */
    CGI_FILE_NOTE,   /* .callguard-HOST-stuck.note */
} cgi_file_kind;

/* A host name of HOST_NAME_MAX (64) bytes and its NUL. */
#define CGI_HOST_PART_MAX 65

/* What a name says. */
typedef struct cgi_file_name {
    pid_t pid;
    uint64_t stamp;               /* a process's file */
    char host[CGI_HOST_PART_MAX]; /* a job's file: HOST as in the name */
    int rank;                     /* -1: no rank part */
    unsigned k;                   /* 1: no K part */
} cgi_file_name;

/* host as a part of a file name (see above); "unknown-host" for NULL or "". */
CGI_HIDDEN void cgi_host_part(char out[CGI_HOST_PART_MAX], const char *host);

/* DIR/NAME of a process's file (CGI_FILE_STATS or CGI_FILE_RINGS) into
 * buf: snprintf's result (cap or more: cut). */
CGI_HIDDEN int cgi_proc_file_name(char *buf, size_t cap, const char *dir, cgi_file_kind kind, pid_t pid,
                                  uint64_t stamp);

/* DIR/NAME of a job's file (malloc'd; NULL: out of memory), host as given
 * (made a part by cgi_host_part); rank < 0: none; k <= 1: none. dir "":
 * the name alone. A host's file (CGI_FILE_LEASE, CGI_FILE_NOTE) has only
 * the host part: rank, pid and k are not used. */
CGI_HIDDEN char *cgi_job_file_name(const char *dir, cgi_file_kind kind, const char *host, int rank, pid_t pid,
                                   unsigned k);

/* 1 when name (no folder) is a name of that kind, with *out what it
 * says; 0 for anything else (out then undefined). */
CGI_HIDDEN int cgi_file_name_parse(const char *name, cgi_file_kind kind, cgi_file_name *out);

#endif
