/* A folder of traces, one per process (`--trace DIR/`, trace_dir.c): how
 * it is told from a file, checked before a run, and how each process's
 * file in it is named. Compiled into libcallguard and the CLI. */
#ifndef CGI_TRACE_DIR_H
#define CGI_TRACE_DIR_H

#include "../common/common.h"

#include <sys/types.h>

/* 1 when path names a folder: it ends with '/', or is one. */
CGI_HIDDEN int cgi_trace_is_folder(const char *path);

/* Whether traces could be written in dir later, creating nothing: it is a
 * folder that can be written, or its parent is (it is made then). 0, or an
 * errno about `where` (dir or its parent). */
CGI_HIDDEN int cgi_trace_folder_check(const char *dir, char *where, size_t cap);

/* A new name in dir for one process's trace, held by an empty file made
 * exclusively (outfile.h replaces an empty file; two processes, hosts or
 * runs never take one name), by host, rank (rank < 0: none) and pid
 * (CGI_FILE_TRACE, common/file_names.h). Makes dir when missing.
 * malloc'd, or NULL with errno set. */
CGI_HIDDEN char *cgi_trace_folder_claim(const char *dir, const char *host, int rank, pid_t pid);

#endif
