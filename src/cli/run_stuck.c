/* `callguard run --stuck AFTER --on-stuck ACTION`: the job tells when it is
 * stuck, and can end itself (docs/report.md, "Stuck jobs").
 *
 * Every AFTER/16 (250 ms to 1 s) while the program runs, the run reads the job's
 * statistics files (shared mappings the processes write as they call: no
 * signal, nothing asked of them): around a launcher, its own directory;
 * inside one (`mpirun callguard run --report DIR/`), every live run's of
 * DIR/ on this host, through their notes. Once a call has been in flight
 * AFTER, the view `callguard status` would write goes to stderr, once, and
 * again when what the stuck processes do changes. Inside a launcher every
 * rank's run looks, but one speaks: the run that creates DIR/'s lease for
 * this host (O_EXCL) holds it until it ends; a lease whose holder is gone
 * is taken over. Each run keeps the view for its own report.
 *
 * abort: SIGTERM to every process of the run's tree (the launcher and
 * what it started), SIGKILL to those left RUN_STUCK_GRACE_S later; the
 * report is written as after any end, and callguard exits RUN_STUCK_EXIT.
 * Inside a launcher every rank's run ends its own rank. A command: run
 * once each time the job becomes stuck, by the run that speaks, with the
 * view as JSON on its stdin; killed after RUN_STUCK_COMMAND_S; its failure
 * is said and the job goes on. */
#define _GNU_SOURCE
#include "run.h"
#include "../common/duration.h"
#include "../common/message.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef MFD_CLOEXEC /* glibc older than 2.27 */
#include <linux/memfd.h>
#endif

static uint64_t stuck_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void run_stuck_options(const run_opts *o, run_watch *w)
{
    memset(w, 0, sizeof *w);
    const char *after = o->set[CGI_SETTING_STUCK] ? o->set[CGI_SETTING_STUCK] : getenv("CALLGUARD_STUCK");
    const char *action = o->set[CGI_SETTING_ON_STUCK] ? o->set[CGI_SETTING_ON_STUCK] : getenv("CALLGUARD_ON_STUCK");
    uint64_t ms = RUN_STUCK_DEFAULT_MS;
    if (after && *after && strcmp(after, "off") == 0)
        ms = 0;
    else if (after && *after)
        cgi_parse_duration(after, CGI_STUCK_MIN_MS, CGI_STUCK_MAX_MS, &ms);
    w->after_ms = ms;
    w->action = RUN_STUCK_REPORT;
    if (action && !strcmp(action, "abort"))
        w->action = RUN_STUCK_ABORT;
    else if (action && *action && strcmp(action, "report") != 0)
        w->action = RUN_STUCK_COMMAND, w->command = action;
    w->cmd = -1;
}

int run_stuck_wait_ms(const run_watch *w)
{
    if (!w->after_ms) return -1;
    uint64_t now = stuck_now_ns();
    return w->next_ns <= now ? 0 : (int)((w->next_ns - now) / 1000000u) + 1;
}

/* ---- who speaks ---------------------------------------------------------------- */

/* Inside a launcher: this run speaks once it holds the folder's lease for
 * this host; a lease left by a run that is gone is taken over. */
static int stuck_speaker(run_watch *w)
{
    if (!w->folder || w->lease) return 1;
    char *path = run_stuck_lease_name(w->folder);
    /* The lease appears with its holder's pid in it (written to a file of this run's own, then linked to
     * the lease's name, which fails where it exists): another run never reads it empty and takes it over
     * while it is being written, as under load two runs once both spoke. */
    char *mine = NULL;
    if (asprintf(&mine, "%s.%d", path, (int)getpid()) < 0) mine = NULL;
    for (int tries = 0; mine && tries < 2; tries++) {
        unlink(mine); /* one a run of this pid left: the file is made new, never opened as found */
        int fd = open(mine, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) break;
        char pid[24];
        int n = snprintf(pid, sizeof pid, "%d\n", (int)getpid());
        int ok = write(fd, pid, (size_t)n) == n;
        close(fd);
        int linked = ok && link(mine, path) == 0, e = errno;
        unlink(mine);
        if (linked) {
            free(mine);
            return w->lease = path, 1;
        }
        if (ok && e != EEXIST && (fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) >= 0) {
            /* A filesystem without hard links: created, then written, as before. */
            ok = write(fd, pid, (size_t)n) == n;
            close(fd);
            if (ok) {
                free(mine);
                return w->lease = path, 1;
            }
            unlink(path);
            break;
        }
        if (!ok || (e != EEXIST && errno != EEXIST)) break;
        char text[24] = "";
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        struct stat st;
        ssize_t got = fd >= 0 && fstat(fd, &st) == 0 && st.st_uid == geteuid() ? read(fd, text, sizeof text - 1) : -1;
        if (fd >= 0) close(fd);
        int holder = got > 0 ? atoi(text) : 0;
        if (got < 0 || (holder > 0 && (kill(holder, 0) == 0 || errno == EPERM))) break;
        unlink(path); /* its holder is gone (or it was left empty by one that was) */
    }
    free(mine);
    free(path);
    return 0;
}

/* ---- abort ----------------------------------------------------------------------- */

/* Sends sig to every process below us (our tree: the program, what it
 * started, orphans that came to us as their subreaper), but for the signal
 * witness and the command. Returns how many were sent it. */
static size_t stuck_signal_tree(const run_watch *w, int sig)
{
    DIR *d = opendir("/proc");
    if (!d) return w->program > 0 && kill(w->program, sig) == 0; /* no /proc: the program alone */
    size_t cap = 256, n = 0, sent = 0;
    pid_t(*pp)[2] = malloc(cap * sizeof *pp);
    struct dirent *e;
    while (pp && (e = readdir(d))) {
        if (!isdigit((unsigned char)e->d_name[0])) continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%.20s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) close(fd);
        char *rp = k > 0 ? (buf[k] = 0, strrchr(buf, ')')) : NULL;
        int ppid;
        char state;
        if (!rp || sscanf(rp + 1, " %c %d", &state, &ppid) != 2) continue;
        if (n == cap) {
            pid_t(*more)[2] = realloc(pp, (cap *= 2) * sizeof *pp);
            if (!more) break;
            pp = more;
        }
        pp[n][0] = atoi(e->d_name), pp[n][1] = ppid, n++;
    }
    closedir(d);
    /* Below us: a parent chain that reaches our pid (at most 64 steps). */
    for (size_t i = 0; pp && i < n; i++) {
        pid_t p = pp[i][0];
        if (run_sig_is_witness(p) || p == w->cmd) continue;
        pid_t up = pp[i][1];
        for (int depth = 0; up > 1 && up != getpid() && depth < 64; depth++) {
            size_t j = 0;
            while (j < n && pp[j][0] != up)
                j++;
            up = j < n ? pp[j][1] : 0;
        }
        if (up == getpid() && kill(p, sig) == 0) sent++;
    }
    free(pp);
    return sent;
}

static void stuck_abort(run_watch *w)
{
    if (w->aborted) return;
    w->aborted = 1, w->abort_ns = stuck_now_ns();
    w->signalled = stuck_signal_tree(w, SIGTERM);
    if (w->spoke && w->folder)
        cgi_say("--on-stuck abort: each rank's run ends its own: SIGTERM to %zu process%s here, SIGKILL after %d s; "
                "exit %d",
                w->signalled, w->signalled == 1 ? "" : "es", RUN_STUCK_GRACE_S, RUN_STUCK_EXIT);
    else if (w->spoke)
        cgi_say("--on-stuck abort: SIGTERM to the job's %zu process%s, SIGKILL after %d s; exit %d", w->signalled,
                w->signalled == 1 ? "" : "es", RUN_STUCK_GRACE_S, RUN_STUCK_EXIT);
}

/* After the grace: SIGKILL to what is left. */
static void stuck_abort_late(run_watch *w, uint64_t now)
{
    if (!w->aborted || w->killed || now - w->abort_ns < (uint64_t)RUN_STUCK_GRACE_S * 1000000000u) return;
    w->killed = 1;
    size_t n = stuck_signal_tree(w, SIGKILL);
    if (n)
        cgi_say("--on-stuck abort: %zu process%s still there after %d s: SIGKILL", n, n == 1 ? "" : "es",
                RUN_STUCK_GRACE_S);
}

/* ---- a command ----------------------------------------------------------------- */

/* The command, in a process group of its own, the view as JSON on its stdin
 * (a file, so a command that does not read it never blocks us). */
static void stuck_command(run_watch *w, const char *json)
{
    int fd = (int)syscall(SYS_memfd_create, "callguard-stuck", MFD_CLOEXEC); /* memfd_create() is glibc 2.27's */
    size_t len = strlen(json);
    if (fd < 0 || write(fd, json, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0) {
        cgi_say("--on-stuck: the view for '%s' could not be made: %s; the job goes on", w->command, strerror(errno));
        if (fd >= 0) close(fd);
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(fd, 0);
        execl("/bin/sh", "sh", "-c", w->command, (char *)NULL);
        _exit(127);
    }
    close(fd);
    if (pid < 0) {
        cgi_say("--on-stuck '%s': cannot start it: %s; the job goes on", w->command, strerror(errno));
        return;
    }
    setpgid(pid, pid);
    w->cmd = pid, w->cmd_ns = stuck_now_ns(), w->cmd_ran = 1;
}

int run_stuck_reaped(run_watch *w, pid_t pid, int status)
{
    if (w->cmd <= 0 || pid != w->cmd) return 0;
    w->cmd = -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !w->cmd_killed) {
        snprintf(w->cmd_result, sizeof w->cmd_result, "exited 0");
        return 1;
    }
    if (w->cmd_killed)
        snprintf(w->cmd_result, sizeof w->cmd_result, "did not end within %d s: killed", RUN_STUCK_COMMAND_S);
    else if (WIFSIGNALED(status))
        snprintf(w->cmd_result, sizeof w->cmd_result, "killed by signal %d", WTERMSIG(status));
    else
        snprintf(w->cmd_result, sizeof w->cmd_result, "exited %d", WEXITSTATUS(status));
    cgi_say("--on-stuck '%s' failed (%s); the job goes on", w->command, w->cmd_result);
    return 1;
}

static void stuck_command_late(run_watch *w, uint64_t now)
{
    if (w->cmd <= 0 || w->cmd_killed || now - w->cmd_ns < (uint64_t)RUN_STUCK_COMMAND_S * 1000000000u) return;
    w->cmd_killed = 1;
    kill(-w->cmd, SIGKILL);
}

/* ---- the look ------------------------------------------------------------------ */

/* The `stuck` member of the report, and the command's stdin (malloc'd). */
static char *stuck_json(const run_watch *w)
{
    char *text = NULL, after[32];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    stuck_duration(w->after_ms, after, sizeof after);
    static const char *const actions[] = {"report", "abort", "command"};
    fprintf(f, "{\"callguard_stuck\": 1, \"headline\": ");
    stuck_json_str(f, w->headline);
    fprintf(f, ", \"after\": \"%s\", \"after_ms\": %llu, \"action\": \"%s\", \"command\": ", after,
            (unsigned long long)w->after_ms, actions[w->action]);
    w->command ? stuck_json_str(f, w->command) : (void)fputs("null", f);
    fprintf(f, ", \"first_unix_ms\": %lld, \"said_late_ms\": %llu, \"views\": %u, \"spoke\": %s", w->first_unix_ms,
            (unsigned long long)w->late_ms, w->views, w->spoke ? "true" : "false");
    if (w->action == RUN_STUCK_ABORT)
        fprintf(f, ", \"aborted\": %s, \"signalled\": %zu, \"killed\": %s, \"ended_ms\": %llu",
                w->aborted ? "true" : "false", w->signalled, w->killed ? "true" : "false",
                (unsigned long long)w->ended_ms);
    if (w->action == RUN_STUCK_COMMAND) {
        fputs(", \"command_result\": ", f);
        w->cmd_result[0] ? stuck_json_str(f, w->cmd_result) : (void)fputs("null", f);
    }
    fprintf(f, ", \"processes\": %s, \"view\": %s}", w->stuck_list ? w->stuck_list : "[]", w->view ? w->view : "null");
    return fclose(f) == 0 ? text : (free(text), NULL);
}

/* The job's files now: inside a launcher, every live run's of the folder
 * on this host (ours among them); else, or when the folder has no note,
 * our own directory. */
static void stuck_files(const run_watch *w, status_files *f)
{
    memset(f, 0, sizeof *f);
    f->quiet = 1;
    if (w->folder) status_add_folder(f, w->folder);
    if (!f->n) status_add_dir(f, w->stats_dir);
}

/* Other hosts' stuck runs, from their notes in the shared folder. */
static void stuck_elsewhere(FILE *out, const status_files *f)
{
    if (f->nelsewhere) fprintf(out, "  stuck on other hosts too (their runs' notes in the folder):\n");
    for (const char *p = f->elsewhere; *p;) {
        size_t n = strcspn(p, "\n");
        fprintf(out, "    %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

/* The note for the job's other hosts (a shared DIR/): written at each look
 * while this run speaks for a stuck job, removed when it is not. */
static void stuck_note(run_watch *w)
{
    if (!w->folder) return;
    char *path = run_stuck_note_name(w->folder);
    if (!w->stuck || !w->lease) {
        if (w->noted) unlink(path), w->noted = 0;
        free(path);
        return;
    }
    char *tmp = NULL, after[32];
    stuck_duration(w->after_ms, after, sizeof after);
    if (asprintf(&tmp, "%s.%d", path, (int)getpid()) > 0) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f) fprintf(f, "callguard stuck\n%s, over --stuck %s\n", w->headline, after);
        if (!f && fd >= 0) close(fd);
        if (f && fclose(f) == 0 && rename(tmp, path) == 0)
            w->noted = 1;
        else
            unlink(tmp);
    }
    free(tmp), free(path);
}

/* The job is stuck and its view changed (or is new): said, kept, acted on. */
static void stuck_say(run_watch *w, const stuck_look *l, const status_files *f, int speaker, int first)
{
    char host[256] = "", where[300];
    gethostname(host, sizeof host - 1);
    snprintf(where, sizeof where, "on %s", host[0] ? host : "this host");
    stuck_headline(l, w->headline, sizeof w->headline);
    if (first && !w->views) {
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        w->first_unix_ms = (long long)rt.tv_sec * 1000 + rt.tv_nsec / 1000000;
        uint64_t oldest = l->v[l->lead].oldest_ns;
        for (size_t i = 0; i < l->n; i++)
            if (l->v[i].oldest_ns > oldest) oldest = l->v[i].oldest_ns;
        w->late_ms = (oldest - l->after_ns) / 1000000u;
    }
    w->views++;
    if (speaker) {
        w->spoke = 1;
        char after[32];
        stuck_duration(w->after_ms, after, sizeof after);
        char *text = stuck_view(f, where, CG_REPORT_TEXT);
        cgi_say("stuck over --stuck %s: %s", after, w->headline);
        if (text) fputs(text, stderr);
        stuck_elsewhere(stderr, f);
        fflush(stderr);
        free(text);
    }
    free(w->view), free(w->stuck_list);
    w->view = stuck_view(f, where, CG_REPORT_JSON);
    char *list = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&list, &len);
    if (m) stuck_json_list(m, l), fclose(m) == 0 ? (void)0 : (free(list), list = NULL);
    w->stuck_list = list;
    if (w->action == RUN_STUCK_ABORT) stuck_abort(w);
    if (w->action == RUN_STUCK_COMMAND && speaker && first && w->cmd <= 0) {
        char *json = stuck_json(w);
        if (json) stuck_command(w, json);
        free(json);
    }
}

void run_stuck_look(run_watch *w)
{
    uint64_t now = stuck_now_ns();
    if (!w->after_ms || now < w->next_ns) return;
    uint64_t every = w->after_ms / 16;
    every = every < RUN_STUCK_LOOK_MS       ? RUN_STUCK_LOOK_MS
            : every > RUN_STUCK_LOOK_MAX_MS ? RUN_STUCK_LOOK_MAX_MS
                                            : every;
    w->next_ns = now + every * 1000000ull;
    stuck_abort_late(w, now);
    stuck_command_late(w, now);
    if (w->aborted) return;
    status_files f;
    stuck_files(w, &f);
    stuck_look l;
    if (stuck_look_at(&l, &f, w->after_ms * 1000000ull, 1) != 0) return status_files_free(&f);
    int speaker = l.nstuck ? stuck_speaker(w) : w->lease != NULL;
    if (!l.nstuck && w->stuck) {
        w->stuck = 0;
        stuck_forget(&w->said);
        if (speaker) cgi_say("no call in flight over --stuck any more: the job moved on");
    } else if (l.nstuck && (!w->stuck || stuck_changed(&l, &w->said))) {
        int first = !w->stuck;
        w->stuck = 1;
        stuck_remember(&l, &w->said);
        stuck_say(w, &l, &f, speaker, first);
    }
    stuck_note(w);
    stuck_look_free(&l);
    status_files_free(&f);
}

void run_stuck_end(run_watch *w)
{
    if (w->aborted) w->ended_ms = (stuck_now_ns() - w->abort_ns) / 1000000u;
    if (!w->aborted) run_stuck_leave(w);
    if (w->views) {
        char *json = stuck_json(w);
        if (json) cg_report_set_stuck(json);
        free(json);
    }
    free(w->view), free(w->stuck_list);
    w->view = w->stuck_list = NULL;
    stuck_forget(&w->said);
}

void run_stuck_leave(run_watch *w)
{
    w->stuck = 0;
    stuck_note(w);
    if (w->lease) unlink(w->lease);
    free(w->lease), w->lease = NULL;
}
