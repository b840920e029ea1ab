/* Reports and traces are written as new files and renamed into place.
 * Mode 0600: a report holds the command line of every process, a trace the
 * names of its threads and calls; either can carry what is not everyone's
 * (the statistics files are 0600 for the same reason). */
#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <limits.h>
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

/* Whether the n bytes at b begin with, or hold, the string literal lit. */
#define CGI_BEGINS(b, n, lit) ((n) >= (ssize_t)sizeof lit - 1 && memcmp(b, lit, sizeof lit - 1) == 0)
#define CGI_HOLDS(b, n, lit) ((n) > 0 && memmem(b, (size_t)(n), lit, sizeof lit - 1) != NULL)

int cgi_outfile_replaceable(const char *path, char *why, size_t cap)
{
    struct stat st;
    if (cap) why[0] = '\0';
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return 1;
    /* O_NOFOLLOW: a symlink put there since the lstat is replaced, not read. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0 && errno == ELOOP) return 1;
    if (fd < 0) {
        snprintf(why, cap, "the file exists and cannot be read to tell whether it is a callguard output: %s",
                 strerror(errno));
        return 0;
    }
    /* The first bytes and the last 4 KiB: any size is judged by two reads.
     * What cgi_json_begin, cgi_text_end and cgi_tj_open/close write. */
    char head[512], tail[4096];
    off_t size = st.st_size;
    ssize_t h = pread(fd, head, sizeof head, 0);
    ssize_t t = pread(fd, tail, sizeof tail, size > 4096 ? size - 4096 : 0);
    close(fd);
    if (CGI_BEGINS(head, h, "{") && CGI_HOLDS(head, h, CGI_OUT_REPORT_SCHEMA)) return 1;
    if (CGI_BEGINS(head, h, CGI_OUT_TIMELINE_HEAD) && CGI_HOLDS(tail, t, CGI_OUT_TIMELINE_PRODUCER)) return 1;
    if (CGI_BEGINS(head, h, CGI_OUT_TEXT_HEAD) && CGI_HOLDS(tail, t, CGI_OUT_TEXT_TOTALS)) return 1;
    if (CGI_BEGINS(head, h, "{\"traceEvents\""))
        snprintf(why, cap, "the file exists and is a timeline of another producer (%lld bytes)", (long long)size);
    else
        snprintf(why, cap, "the file exists (%lld bytes) and is not a callguard report or timeline", (long long)size);
    return 0;
}

/* The new file of an output whose path was refused: renamed to
 * PATH.callguard-KIND when that name is free or callguard's, else left at
 * its temporary name. Fills note with where it went and why. */
static void cgi_outfile_keep(cgi_outfile *o, const char *path, const char *kind, const char *why, char *note,
                             size_t cap)
{
    char *kept = NULL;
    struct stat st;
    char ignored[8];
    if (asprintf(&kept, "%s.callguard-%s", path, kind) < 0) kept = NULL;
    int free_name = kept && (lstat(kept, &st) != 0 ? errno == ENOENT
                                                   : S_ISREG(st.st_mode) && cgi_outfile_replaceable(kept, ignored, 0));
    const char *where = free_name && rename(o->tmp, kept) == 0 ? kept : o->tmp;
    snprintf(note, cap,
             "%s written to %s, not %s: %s (callguard replaces only its own reports and timelines and empty files)",
             kind, where, path, why);
    free(kept);
}

int cgi_outfile_close(cgi_outfile *o, const char *path, const char *kind, char *note, size_t cap)
{
    errno = 0;
    int e = fflush(o->f) != 0 || ferror(o->f) ? (errno ? errno : EIO) : 0;
    if (o->own) {
        if (!e && o->tmp && fsync(fileno(o->f)) != 0 && errno != EINVAL) e = errno;
        if (fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
        char why[160];
        if (!e && o->tmp && !cgi_outfile_replaceable(path, why, sizeof why)) {
            cgi_outfile_keep(o, path, kind, why, note, cap);
            free(o->tmp);
            *o = (cgi_outfile){0};
            return EEXIST;
        }
        if (!e && o->tmp && rename(o->tmp, path) != 0) e = errno;
        if (e && o->tmp) unlink(o->tmp);
    }
    free(o->tmp);
    *o = (cgi_outfile){0};
    return e;
}

/* The new file's name is the path's with ".XXXXXX" after it (mkostemp):
 * a last name that fits the directory only without those 7 bytes, or a
 * path that fits PATH_MAX only without them, could never be written. */
#define CGI_OUTFILE_SUFFIX 7

int cgi_outfile_name_too_long(const char *path, char *why, size_t cap)
{
    const char *slash = strrchr(path, '/');
    const char *last = slash ? slash + 1 : path;
    size_t len = strlen(path), n = strlen(last);
    if (len + CGI_OUTFILE_SUFFIX >= PATH_MAX) {
        snprintf(why, cap,
                 "the path has %zu bytes: at most %d fit (PATH_MAX %d, less %d for the new file's suffix .XXXXXX)", len,
                 PATH_MAX - 1 - CGI_OUTFILE_SUFFIX, PATH_MAX, CGI_OUTFILE_SUFFIX);
        return 1;
    }
    long max = NAME_MAX;
    if (slash) {
        char *dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
        long m = dir ? pathconf(dir, _PC_NAME_MAX) : -1;
        if (m > 0) max = m;
        free(dir);
    }
    if ((long)(n + CGI_OUTFILE_SUFFIX) <= max) return 0;
    snprintf(why, cap,
             "its last name has %zu bytes: at most %ld fit there (a name has at most %ld, less %d for the new "
             "file's suffix .XXXXXX)",
             n, max - CGI_OUTFILE_SUFFIX, max, CGI_OUTFILE_SUFFIX);
    return 1;
}

int cgi_outfile_check(const char *path, char *where, size_t cap)
{
    struct stat st;
    snprintf(where, cap, "%s", path);
    if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stderr") == 0 || strcmp(path, "/dev/stdout") == 0) return 0;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return EISDIR;
    if (lstat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISBLK(st.st_mode))) return 0;
    const char *slash = strrchr(path, '/');
    if (cgi_outfile_name_too_long(path, where, cap)) return ENAMETOOLONG;
    if (!slash)
        snprintf(where, cap, ".");
    else if (slash == path)
        snprintf(where, cap, "/");
    else
        snprintf(where, cap, "%.*s", (int)(slash - path), path);
    if (stat(where, &st) != 0) return errno;
    if (!S_ISDIR(st.st_mode)) return ENOTDIR;
    return access(where, W_OK | X_OK) == 0 ? 0 : errno;
}
