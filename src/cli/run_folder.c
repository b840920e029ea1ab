/* `--report DIR/`: one report file per `callguard run`, for jobs whose
 * launcher starts callguard on every node (`mpirun -n 4 callguard run
 * --report out/ -- ./app`, `srun callguard run ...`). Each run names its
 * file by host, rank and the program's pid, and creates it exclusively:
 * ranks that share a folder (one file system, many nodes; or two jobs one
 * after the other) never replace each other's reports. */
#define _GNU_SOURCE
#include "../common/file_names.h"
#include "../common/launcher.h"
#include "../common/message.h"
#include "../report/outfile.h"
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int run_report_is_folder(const char *report)
{
    struct stat st;
    size_t n = strlen(report);
    return (n && report[n - 1] == '/') || (stat(report, &st) == 0 && S_ISDIR(st.st_mode));
}

/* This host's name as part of a file name (one line, no path: file_names.h). */
static void run_host_part(char part[CGI_HOST_PART_MAX])
{
    char host[HOST_NAME_MAX + 1] = ""; /* a 64-byte name and its NUL: gethostname fails for less room */
    if (gethostname(host, sizeof host) != 0) host[0] = '\0';
    cgi_host_part(part, host);
}

/* The report's name in dir, by host, rank (where a launcher named one)
 * and pid (CGI_FILE_REPORT); K from 2 when the name is taken. pid 0: the
 * longest name (for the checks). */
static char *run_folder_name(const char *dir, pid_t pid, unsigned k)
{
    char host[CGI_HOST_PART_MAX];
    run_host_part(host);
    cgi_rank rank;
    cgi_launcher_rank(&rank);
    char *path = cgi_job_file_name(dir, CGI_FILE_REPORT, host, (int)rank.rank, pid ? pid : INT_MAX, k);
    if (!path) exit(1);
    return path;
}

int run_check_folder(const char *flag, const char *dir)
{
    struct stat st;
    int e = 0, rc = -1;
    const char *where = dir;
    char *parent = NULL;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            e = ENOTDIR;
        else if (access(dir, W_OK | X_OK) != 0)
            e = errno;
    } else if (errno != ENOENT) {
        e = errno;
    } else {
        /* Made after the run (by every rank that gets here first): its
         * parent must be there to hold it. */
        parent = strdup(dir);
        if (!parent) return 1;
        size_t n = strlen(parent);
        while (n > 1 && parent[n - 1] == '/')
            parent[--n] = '\0';
        /* A symbolic link to nothing: stat says ENOENT, but the name is
         * taken, so mkdir after the run would find it there (EEXIST) and
         * the report would be lost (exit 125). Refused now, saying so. */
        char target[512];
        ssize_t len = lstat(parent, &st) == 0 && S_ISLNK(st.st_mode) ? readlink(parent, target, sizeof target - 1) : -1;
        if (len >= 0) {
            target[len] = '\0';
            rc = cli_usage_error("%s %s: cannot create a report in %s: a symbolic link to %s, which does not exist (a "
                                 "folder: one report per process, named by host, rank and pid)",
                                 flag, dir, parent, target);
            free(parent);
            return rc;
        }
        cgi_path_parent(parent);
        where = parent;
        if (stat(parent, &st) != 0)
            e = errno;
        else if (!S_ISDIR(st.st_mode))
            e = ENOTDIR;
        else if (access(parent, W_OK | X_OK) != 0)
            e = errno;
    }
    if (e)
        rc = cli_usage_error("%s %s: cannot create a report in %s: %s (a folder: one report per process, named by "
                             "host, rank and pid)",
                             flag, dir, where, strerror(e));
    free(parent);
    if (e) return rc;
    char why[300], *longest = run_folder_name(dir, 0, 99999);
    if (cgi_outfile_name_too_long(longest, why, sizeof why))
        rc = cli_usage_error("%s %s: a report in it could not be created: %s", flag, dir, why);
    free(longest);
    return rc;
}

char *run_folder_claim(const char *dir, pid_t pid)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        cgi_say("cannot write a report in %s: %s", dir, strerror(errno));
        return NULL;
    }
    /* The name is held by an empty file made with O_EXCL; the report then
     * replaces that empty file of ours (an empty file is replaceable:
     * outfile.h), never a file another run made. */
    for (unsigned k = 1; k < 100000; k++) {
        char *path = run_folder_name(dir, pid, k);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0) {
            close(fd);
            return path;
        }
        int e = errno;
        if (e != EEXIST) {
            cgi_say("cannot write report %s: %s", path, strerror(e));
            free(path);
            return NULL;
        }
        free(path);
    }
    cgi_say("cannot write a report in %s: every name for this process is taken", dir);
    return NULL;
}

/* ---- the note of a live run (callguard status DIR/) -----------------------------
 * A note in DIR by host and pid (CGI_FILE_LIVE), made when the run starts
 * and removed when its report is written: "callguard live\nhost HOST\nstats STATS_DIR\n".
 * `callguard status DIR/` reads the statistics of the runs of its host. */

char *run_live_note(const char *dir, const char *stats_dir)
{
    char host[CGI_HOST_PART_MAX], *path, *text;
    run_host_part(host);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) return NULL;
    if (!(path = cgi_job_file_name(dir, CGI_FILE_LIVE, host, -1, getpid(), 1)) ||
        asprintf(&text, "callguard live\nhost %s\nstats %s\n", host, stats_dir) < 0)
        exit(1);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    size_t len = strlen(text);
    int ok = fd >= 0 && write(fd, text, len) == (ssize_t)len;
    if (fd >= 0) close(fd);
    if (fd >= 0 && !ok) unlink(path);
    free(text);
    if (!ok) free(path), path = NULL;
    return path; /* no note: status does not find the run; the run goes on */
}

char *run_stuck_lease_name(const char *dir)
{
    char host[CGI_HOST_PART_MAX], *path;
    run_host_part(host);
    if (!(path = cgi_job_file_name(dir, CGI_FILE_LEASE, host, -1, 0, 0))) exit(1);
    return path;
}

char *run_stuck_note_name(const char *dir)
{
    char host[CGI_HOST_PART_MAX], *path;
    run_host_part(host);
    if (!(path = cgi_job_file_name(dir, CGI_FILE_NOTE, host, -1, 0, 0))) exit(1);
    return path;
}

int run_stuck_note_read(int dfd, const char *name, char *line, size_t cap)
{
    char host[CGI_HOST_PART_MAX];
    cgi_file_name is;
    run_host_part(host);
    if (!cgi_file_name_parse(name, CGI_FILE_NOTE, &is) || strcmp(is.host, host) == 0) return 0; /* another host's */
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    char buf[1024];
    ssize_t got = -1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    /* The caller's own, a regular file, written by its run within RUN_STUCK_NOTE_FRESH_S (a run that
     * was killed leaves one that no longer counts). */
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        now.tv_sec - st.st_mtim.tv_sec <= RUN_STUCK_NOTE_FRESH_S)
        got = read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (got <= 0) return 0;
    buf[got] = '\0';
    if (strncmp(buf, "callguard stuck\n", 16) != 0) return 0;
    const char *text = buf + 16;
    size_t len = strcspn(text, "\n");
    if (!text[len] || len + 1 > cap) return 0;
    snprintf(line, cap, "%.*s", (int)len, text);
    return 1;
}

int run_live_note_read(int dfd, const char *name, char *stats, size_t cap)
{
    cgi_file_name is;
    if (!cgi_file_name_parse(name, CGI_FILE_LIVE, &is)) return 0;
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    char buf[8192], host[CGI_HOST_PART_MAX], want[CGI_HOST_PART_MAX + 8];
    ssize_t got = -1;
    /* Only a note of the caller's, small and regular: another user's
     * could name any directory. */
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size < 8192)
        got = read(fd, buf, sizeof buf - 1);
    if (fd >= 0) close(fd);
    if (got <= 0) return 0;
    buf[got] = '\0';
    run_host_part(host);
    snprintf(want, sizeof want, "\nhost %s\n", host);
    char *s = strstr(buf, "\nstats ");
    if (strncmp(buf, "callguard live\n", 15) != 0 || !strstr(buf, want) || !s) return 0;
    s += 7;
    size_t len = strcspn(s, "\n");
    if (!len || len >= cap || s[0] != '/') return 0;
    memcpy(stats, s, len);
    stats[len] = '\0';
    return 1;
}
