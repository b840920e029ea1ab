/* The statistics files of live guarded processes, for `callguard status`
 * and `callguard run --stuck`: a pid's, a statistics directory's, a
 * report folder's (its live runs' notes, run_folder.c), every one of the
 * caller's. A process's file is in the directory its `callguard run` named
 * in its environment (CALLGUARD_STATS_DIR), which only its user (and root)
 * can read: the processes of other users are refused, never read. */
#define _GNU_SOURCE
#include "../common/file_names.h"
#include "../common/message.h"
#include "../common/stats_file.h"
#include "cli.h"
#include "run.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void status_files_free(status_files *f)
{
    for (size_t k = 0; k < f->n; k++)
        free(f->v[k]);
    free(f->v);
    f->v = NULL, f->n = f->cap = 0;
}

/* Out of memory: said, and the command ends (exit 1). */
static _Noreturn void status_no_memory(void)
{
    cgi_say("status: out of memory");
    exit(1);
}

static void status_add(status_files *f, char *path)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->v[i], path) == 0) return free(path);
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 16;
        char **more = realloc(f->v, cap * sizeof *more);
        if (!more) status_no_memory();
        f->v = more, f->cap = cap;
    }
    f->v[f->n++] = path;
}

/* A directory of statistics files that the caller may trust: a real
 * directory (not a link), the caller's, writable by no one else. */
static int status_dir_ok(const char *dir)
{
    struct stat st;
    return lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 022);
}

/* The newest statistics file of pid in dir (an exec'd program has one per
 * image, the newest last), if its header says it is that process now
 * (its start time: not an earlier process of the same pid). */
static char *status_file_of(const char *dir, pid_t pid)
{
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char best[256] = "";
    uint64_t best_t = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        cgi_file_name is;
        if (cgi_file_name_parse(e->d_name, CGI_FILE_STATS, &is) && is.pid == pid && is.stamp >= best_t &&
            strlen(e->d_name) < sizeof best)
            best_t = is.stamp, strcpy(best, e->d_name);
    }
    closedir(d);
    if (!best[0]) return NULL;
    char *path, proc[64];
    if (asprintf(&path, "%s/%s", dir, best) < 0) status_no_memory();
    cgi_stats_header h;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    int ok = fd >= 0 && pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h;
    if (fd >= 0) close(fd);
    snprintf(proc, sizeof proc, "/proc/%d/stat", (int)pid);
    if (!ok || h.pid != pid || (h.proc_start && h.proc_start != cgi_proc_starttime(proc))) {
        free(path);
        return NULL;
    }
    return path;
}

/* A process's whole environment can be this long: the kernel takes at most
 * 6 MiB of arguments and environment together (a quarter of the stack
 * limit, at most 3/4 of 8 MiB). */
#define STATUS_ENVIRON_MAX (8u << 20)

/* CALLGUARD_STATS_DIR of a process of the caller's, from its environment
 * (malloc'd), read whole: its own variables may come before ours and fill
 * any fixed buffer. NULL when it has none or cannot be read; *said when
 * that was said (memory ran out, for a pid the user `named`). */
static char *status_dir_of(pid_t pid, int named, int *said)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    size_t cap = 65536, n = 0;
    char *buf = malloc(cap), *dir = NULL;
    for (ssize_t k = 1; buf && k > 0;) {
        if (n + 1 == cap) {
            char *more = cap < STATUS_ENVIRON_MAX ? realloc(buf, cap * 2) : NULL;
            if (!more) {
                if ((*said = named))
                    cgi_say("status: pid %d: its environment (over %zu bytes) could not be read whole: %s", (int)pid, n,
                            cap < STATUS_ENVIRON_MAX ? "out of memory" : "longer than any environment");
                free(buf), buf = NULL;
                break;
            }
            buf = more, cap *= 2;
        }
        k = read(fd, buf + n, cap - 1 - n);
        if (k > 0) n += (size_t)k;
        if (k < 0 && errno == EINTR) k = 1;
    }
    close(fd);
    if (!buf) return NULL;
    buf[n] = '\0';
    for (char *p = buf; p < buf + n && !dir; p += strlen(p) + 1)
        if (strncmp(p, "CALLGUARD_STATS_DIR=", 20) == 0 && p[20]) dir = strdup(p + 20);
    free(buf);
    return dir;
}

/* Is pid a live process of the caller's? */
static int status_mine(pid_t pid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    return stat(path, &st) == 0 && st.st_uid == geteuid();
}

/* One process: its statistics file, when it is the caller's and guarded.
 * `named`: the user named it (say why when it is not there). */
void status_add_pid(status_files *f, pid_t pid, int named)
{
    if (!status_mine(pid)) {
        if (named) cgi_say("status: pid %d: no such process of yours (status reads only your own)", (int)pid);
        f->refused += named;
        return;
    }
    int said = 0;
    char *dir = status_dir_of(pid, named, &said), *file = dir && status_dir_ok(dir) ? status_file_of(dir, pid) : NULL;
    if (file)
        status_add(f, file);
    else if (named && !said)
        cgi_say("status: pid %d: no statistics of it (not run by callguard run, or no guarded call yet)", (int)pid);
    if (!file) f->refused += named;
    free(dir);
}

/* Every live process with a statistics file in dir. */
void status_add_dir(status_files *f, const char *dir)
{
    if (!status_dir_ok(dir)) return;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        cgi_file_name is;
        if (!cgi_file_name_parse(e->d_name, CGI_FILE_STATS, &is) || !status_mine(is.pid)) continue;
        char *file = status_file_of(dir, is.pid);
        if (file) status_add(f, file);
    }
    closedir(d);
}

/* Every process of the caller's on this host that callguard run started. */
void status_add_all(status_files *f)
{
    DIR *d = opendir("/proc");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)))
        if (isdigit((unsigned char)e->d_name[0])) status_add_pid(f, (pid_t)atoi(e->d_name), 0);
    closedir(d);
}

/* A run of the folder that ended left its report: its rank and host, from
 * the name run_folder.c gives it. */
static void status_note_ended(status_files *f, const char *name)
{
    cgi_file_name is;
    if (!cgi_file_name_parse(name, CGI_FILE_REPORT, &is) || is.rank < 0) return;
    size_t len = strlen(f->ended);
    if (len + 80 < sizeof f->ended)
        snprintf(f->ended + len, sizeof f->ended - len, "%s%d on %s", f->nended ? ", " : "", is.rank, is.host);
    else if (len + 6 < sizeof f->ended && !strstr(f->ended, ", ..."))
        strcat(f->ended, ", ...");
    f->nended++;
}

/* A report folder: the runs alive on this host left a note each naming
 * their statistics directory (run_folder.c); a statistics directory
 * itself is taken too. Returns how many runs were found. */
int status_add_folder(status_files *f, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return f->quiet ? -1 : (cgi_say("status: %s: %s", dir, strerror(errno)), -1);
    int runs = 0;
    struct dirent *e;
    size_t before = f->n;
    while ((e = readdir(d))) {
        char stats[4096], line[600];
        status_note_ended(f, e->d_name);
        size_t len = strlen(f->elsewhere);
        if (run_stuck_note_read(dirfd(d), e->d_name, line, sizeof line) && len + strlen(line) + 2 < sizeof f->elsewhere)
            snprintf(f->elsewhere + len, sizeof f->elsewhere - len, "%s\n", line), f->nelsewhere++;
        if (!run_live_note_read(dirfd(d), e->d_name, stats, sizeof stats)) continue;
        runs++;
        status_add_dir(f, stats);
    }
    closedir(d);
    if (!runs) status_add_dir(f, dir);
    return runs || f->n > before;
}
