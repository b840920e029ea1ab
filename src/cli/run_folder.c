/* `--report DIR/`: one report file per `callguard run`, for jobs whose
 * launcher starts callguard on every node (`mpirun -n 4 callguard run
 * --report out/ -- ./app`, `srun callguard run ...`). Each run names its
 * file by host, rank and the program's pid, and creates it exclusively:
 * ranks that share a folder (one file system, many nodes; or two jobs one
 * after the other) never replace each other's reports. */
#define _GNU_SOURCE
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
#include <unistd.h>

int run_report_is_folder(const char *report)
{
    struct stat st;
    size_t n = strlen(report);
    return (n && report[n - 1] == '/') || (stat(report, &st) == 0 && S_ISDIR(st.st_mode));
}

/* DIR/callguard-HOST-rankR-pidP[-K].json: the host name's characters other
 * than letters, digits, '.', '-' and '_' as '_' (a file name, one line);
 * no rank part where no launcher named one; K from 2 when the name is
 * taken. pid 0: the longest name (for the checks). */
static char *run_folder_name(const char *dir, pid_t pid, unsigned k)
{
    char host[HOST_NAME_MAX + 1] = ""; /* a 64-byte name and its NUL: gethostname fails for less room */
    if (gethostname(host, sizeof host) != 0 || !host[0]) strcpy(host, "unknown-host");
    for (char *c = host; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_", *c)) *c = '_';
    cgi_rank rank;
    cgi_launcher_rank(&rank);
    char rpart[24] = "", ppart[24], kpart[16] = "";
    if (rank.rank >= 0) snprintf(rpart, sizeof rpart, "-rank%d", (int)rank.rank);
    snprintf(ppart, sizeof ppart, "-pid%d", pid ? (int)pid : 2147483647);
    if (k > 1) snprintf(kpart, sizeof kpart, "-%u", k);
    size_t n = strlen(dir);
    char *path;
    if (asprintf(&path, "%s%scallguard-%s%s%s%s.json", dir, n && dir[n - 1] == '/' ? "" : "/", host, rpart, ppart,
                 kpart) < 0)
        exit(1);
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
        char *slash = strrchr(parent, '/');
        if (slash == parent)
            parent[1] = '\0';
        else if (slash)
            *slash = '\0';
        else
            strcpy(parent, ".");
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
