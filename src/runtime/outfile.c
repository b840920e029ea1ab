/* Reports and traces are written as new files and renamed into place.
 * Mode 0600: a report holds the command line of every process, a trace the
 * names of its threads and calls; either can carry what is not everyone's
 * (the statistics files are 0600 for the same reason). */
#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cgi_outfile_open(const char *path, cgi_outfile *o)
{
    *o = (cgi_outfile){0};
    if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stderr") == 0) return o->f = stderr, 0;
    if (strcmp(path, "/dev/stdout") == 0) return o->f = stdout, 0;
    struct stat st;
    int fd;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) return EISDIR;
    if (lstat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISBLK(st.st_mode))) {
        /* O_NONBLOCK for the open only: a FIFO without a reader fails now
         * (ENXIO) instead of hanging the exit. */
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) return errno;
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    } else {
        if (asprintf(&o->tmp, "%s.XXXXXX", path) < 0) return o->tmp = NULL, ENOMEM;
        fd = mkostemp(o->tmp, O_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            free(o->tmp), o->tmp = NULL;
            return e;
        }
    }
    o->f = fdopen(fd, "w");
    if (!o->f) {
        close(fd);
        if (o->tmp) unlink(o->tmp), free(o->tmp), o->tmp = NULL;
        return ENOMEM;
    }
    o->own = 1;
    return 0;
}

int cgi_outfile_close(cgi_outfile *o, const char *path)
{
    errno = 0;
    int e = fflush(o->f) != 0 || ferror(o->f) ? (errno ? errno : EIO) : 0;
    if (o->own) {
        if (!e && o->tmp && fsync(fileno(o->f)) != 0 && errno != EINVAL) e = errno;
        if (fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
        if (!e && o->tmp && rename(o->tmp, path) != 0) e = errno;
        if (e && o->tmp) unlink(o->tmp);
    }
    free(o->tmp);
    *o = (cgi_outfile){0};
    return e;
}

int cgi_outfile_check(const char *path, char *where, size_t cap)
{
    struct stat st;
    snprintf(where, cap, "%s", path);
    if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stderr") == 0 || strcmp(path, "/dev/stdout") == 0) return 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return EISDIR;
    if (lstat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISBLK(st.st_mode))) return 0;
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(where, cap, ".");
    else if (slash == path) snprintf(where, cap, "/");
    else snprintf(where, cap, "%.*s", (int)(slash - path), path);
    if (stat(where, &st) != 0) return errno;
    if (!S_ISDIR(st.st_mode)) return ENOTDIR;
    return access(where, W_OK | X_OK) == 0 ? 0 : errno;
}
