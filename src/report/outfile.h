/* Files callguard writes for people: reports and traces (outfile.c). */
#ifndef CGI_OUTFILE_H
#define CGI_OUTFILE_H

#include "../common/common.h"

#include <stdio.h>

/* What marks callguard's own outputs: their writers write these, and
 * cgi_outfile_replaceable knows a file by them (and report_read.c a
 * report by its schema). A JSON report begins with '{' and holds
 * CGI_OUT_REPORT_SCHEMA in its first bytes (as callguard writes it, at
 * the start, or as a tool that rewrote it keeps it); a
 * timeline begins with CGI_OUT_TIMELINE_HEAD and its last lines hold
 * CGI_OUT_TIMELINE_PRODUCER; a text report begins with CGI_OUT_TEXT_HEAD
 * and its totals line holds CGI_OUT_TEXT_TOTALS. */
#define CGI_REPORT_SCHEMA "callguard-report"
#define CGI_OUT_REPORT_SCHEMA "\"schema\": \"" CGI_REPORT_SCHEMA "\""
#define CGI_OUT_TIMELINE_HEAD "{\"traceEvents\":["
#define CGI_OUT_TIMELINE_PRODUCER "\"otherData\":{\"producer\":\"callguard "
#define CGI_OUT_TEXT_HEAD "callguard: "
#define CGI_OUT_TEXT_TOTALS " ms waiting for locks, "

/* An output being written to path. */
typedef struct cgi_outfile {
    FILE *f;
    char *tmp; /* the new file renamed over path at the end; NULL: written in place */
    int own;   /* f is ours to close (not stdout or stderr) */
} cgi_outfile;

/* Opens path for a new report or trace:
 *   "-" and "/dev/stderr": the stderr this process was given; "/dev/stdout":
 *     its stdout (never reopened: `>> log` appends);
 *   an existing device or FIFO (/dev/null, /dev/full): opened in place;
 *   anything else: a new file PATH.XXXXXX (O_EXCL, O_CLOEXEC, mode 0600)
 *     that cgi_outfile_close renames over path, so a symlink planted at path
 *     is replaced, never followed, and nothing is truncated before the new
 *     content is complete.
 * Returns 0 or an errno. */
CGI_HIDDEN int cgi_outfile_open(const char *path, cgi_outfile *o);
/* Flushes and closes; renames the new file into place when nothing failed,
 * else removes it. Returns 0 or the first errno. A file at path that is
 * not cgi_outfile_replaceable is never replaced: the new file is kept
 * beside it as PATH.callguard-KIND (kind: "report", "timeline"; when that
 * name is free or callguard's, else as PATH.XXXXXX), note says where and
 * why (one line), and EEXIST is returned. */
CGI_HIDDEN int cgi_outfile_close(cgi_outfile *o, const char *path, const char *kind, char *note, size_t cap);

/* Whether a report or trace may replace what is at path: yes when nothing
 * is there, something not a regular file (a symlink is replaced, never
 * followed; a device or FIFO is written in place), an empty file, or one
 * callguard wrote (a JSON or text report, a timeline: told by its first
 * and last bytes). callguard is preloaded into other people's programs:
 * `--trace data.csv` must never cost them data.csv. 1, or 0 with why
 * saying what is there (one line, "the file exists ..."). */
CGI_HIDDEN int cgi_outfile_replaceable(const char *path, char *why, size_t cap);

/* Whether a report or trace could be written at path later, creating
 * nothing: 0, or an errno about `where` (path itself, or the directory
 * that would hold the new file); ENAMETOOLONG: `where` says which name is
 * too long (cgi_outfile_name_too_long). */
/* 1 when the new file of path (PATH.XXXXXX) could never be made: its last
 * name or the whole path would be too long; why says which, in one line. */
CGI_HIDDEN int cgi_outfile_name_too_long(const char *path, char *why, size_t cap);
CGI_HIDDEN int cgi_outfile_check(const char *path, char *where, size_t cap);

#endif
