/* A folder of traces, one per process (trace_dir.h). A job's processes
 * on many hosts may share the folder (one file system): each names its
 * file by host, rank and pid and creates it exclusively. */
#define _GNU_SOURCE
#include "trace_dir.h"

#include "../common/file_names.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cgi_trace_is_folder(const char *path)
{
    struct stat st;
    size_t n = strlen(path);
    return (n && path[n - 1] == '/') || (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
}

static int cgi_trace_writable_dir(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0) return errno;
    if (!S_ISDIR(st.st_mode)) return ENOTDIR;
    return access(dir, W_OK | X_OK) != 0 ? errno : 0;
}

int cgi_trace_folder_check(const char *dir, char *where, size_t cap)
{
    snprintf(where, cap, "%s", dir);
    int e = cgi_trace_writable_dir(dir);
    if (e != ENOENT) return e;
    /* Made when the first trace is written: its parent must hold it. */
    char parent[PATH_MAX];
    size_t n = strlen(dir);
    if (n >= sizeof parent) return ENAMETOOLONG;
    memcpy(parent, dir, n + 1);
    cgi_path_parent(parent);
    snprintf(where, cap, "%s", parent);
    return cgi_trace_writable_dir(parent);
}

char *cgi_trace_folder_claim(const char *dir, const char *host, int rank, pid_t pid)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return NULL;
    for (unsigned k = 1; k < 100000; k++) {
        char *path = cgi_job_file_name(dir, CGI_FILE_TRACE, host, rank, pid, k);
        if (!path) return NULL;
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0) {
            close(fd);
            return path;
        }
        int e = errno;
        free(path);
        if (e != EEXIST) return errno = e, NULL;
    }
    errno = EEXIST;
    return NULL;
}
