/* callguard run: starting the program and waiting for its whole process
 * tree (callguard is the subreaper of its orphans), with the signals that
 * come to callguard passed to the program (run_signals.c), and each
 * statistics file made small as its process ends. */
#define _GNU_SOURCE
#include "run.h"
#include "../common/message.h"
#include "../report/stats_settle.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The statistics files as their processes end. A process's file is open
 * for writing as long as the process maps it; inotify says when the last
 * writer closed it (the process exited, died or exec'd), and
 * cgi_stats_settle makes it small: the run's directory grows with the
 * processes alive at once, not with every process that ran. */
typedef struct run_settler {
    int ino; /* -1: the files stay as they are */
    int dfd;
    cgi_stats_region *buf;
} run_settler;

static void settler_open(run_settler *s, const char *dir)
{
    s->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    s->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    s->buf = malloc(sizeof *s->buf);
    if (s->ino >= 0 && s->dfd >= 0 && s->buf && inotify_add_watch(s->ino, dir, IN_CLOSE_WRITE) >= 0) return;
    if (s->ino >= 0) close(s->ino);
    if (s->dfd >= 0) close(s->dfd);
    free(s->buf);
    *s = (run_settler){-1, -1, NULL};
}

static void settler_close(run_settler *s)
{
    if (s->ino < 0) return;
    close(s->ino), close(s->dfd), free(s->buf);
}

/* Events were lost (the queue overflowed): every file is looked at. */
static void settler_all(run_settler *s)
{
    int fd = dup(s->dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        cgi_stats_settle(s->dfd, e->d_name, s->buf);
    closedir(d);
}

static void settler_drain(run_settler *s)
{
    if (s->ino < 0) return;
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(s->ino, buf, sizeof buf)) > 0)
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            if (ev->mask & IN_Q_OVERFLOW)
                settler_all(s);
            else if (ev->len)
                cgi_stats_settle(s->dfd, ev->name, s->buf);
            p += sizeof *ev + ev->len;
        }
}

/* Wakes ppoll: a child ended. */
static void on_sigchld(int sig) { (void)sig; }
/* A lease break (stats_settle.c holds a lease for a moment): ignored, not fatal. */
static void on_sigio(int sig) { (void)sig; }

/* SIGCHLD, SIGINT, SIGTERM, SIGHUP and SIGQUIT are blocked except inside
 * ppoll, so none is missed between a waitpid and the wait, and none comes
 * while callguard passes one on; the program starts with our mask as it
 * was (old). The four are held from before the fork until the program has
 * a pid: one that comes while it starts reaches it, rather than killing
 * callguard and leaving the program running without it, or being
 * swallowed by the child before exec. waiting: the mask inside ppoll. */
static void run_signals_before_fork(sigset_t *old, sigset_t *waiting)
{
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGCHLD);
    sigprocmask(SIG_BLOCK, &blocked, old);
    *waiting = *old;
    sigdelset(waiting, SIGCHLD);
    run_sig_start(&blocked, waiting);
}

/* The child: the program, with the signals as they were, or the exec's
 * errno on the pipe. */
static _Noreturn void run_exec_child(char **prog, env_list *env, const int errpipe[2], const sigset_t *old)
{
    close(errpipe[0]);
    run_sig_in_child();
    sigprocmask(SIG_SETMASK, old, NULL);
    environ = env->v;
    execvp(prog[0], prog);
    int e = errno;
    if (write(errpipe[1], &e, sizeof e) < 0) _exit(127);
    _exit(127);
}

/* The program has its pid: the signals held are passed on from the first
 * wait; SIGCHLD wakes ppoll. */
static void run_signals_after_fork(pid_t pid)
{
    run_sig_program(pid);
    struct sigaction sa = {0};
    sa.sa_handler = on_sigchld;
    sigaction(SIGCHLD, &sa, NULL);
    sa.sa_handler = on_sigio;
    sigaction(SIGIO, &sa, NULL);
}

/* Reaps every process of the tree that has ended, keeping how each ended.
 * Returns waitpid's last answer (0: some still run; -1 with ECHILD: none
 * is left), or -2 out of memory. */
static pid_t run_reap(pid_t pid, run_watch *watch, run_result *r, size_t *cap)
{
    int st;
    pid_t w;
    while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
        if (run_sig_witness(w) || run_stuck_reaped(watch, w, st)) continue;
        if (w == pid) r->child_status = st, run_sig_end();
        if (r->nexits == *cap) {
            cg_proc_exit *more = realloc(r->exits, (*cap *= 2) * sizeof *r->exits);
            if (!more) return -2;
            r->exits = more;
        }
        r->exits[r->nexits++] = (cg_proc_exit){w, WIFSIGNALED(st), WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st)};
    }
    return w;
}

/* Until the whole tree has exited: statistics files settled and processes
 * reaped as they end, asleep in ppoll between. Returns 0, or 1 out of memory. */
static int run_wait_tree(pid_t pid, run_settler *settler, const sigset_t *waiting, run_watch *watch, run_result *r)
{
    size_t cap = 16;
    r->exits = malloc(cap * sizeof *r->exits);
    if (!r->exits) return 1;
    for (;;) {
        /* Files first: a process that exec'd is still there to be seen. */
        settler_drain(settler);
        pid_t w = run_reap(pid, watch, r, &cap);
        if (w == -2) return 1;
        if (w < 0 && errno != EINTR) break; /* ECHILD: the whole tree has exited */
        if (w == 0) {
            /* Asleep until a child ends, a file settles, a signal comes or
             * the job is to be looked at (--stuck). */
            struct pollfd p = {settler->ino, POLLIN, 0};
            int ms = run_stuck_wait_ms(watch);
            struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
            ppoll(&p, settler->ino >= 0, ms >= 0 ? &ts : NULL, waiting);
            run_sig_pass();
            run_stuck_look(watch);
        }
    }
    return 0;
}

/* Starts the program and waits for it and every orphan of its tree that
 * comes to us, so "after the whole tree has exited" means it, settling
 * statistics files as their processes end. Returns 0, or 1 when callguard
 * itself failed. */
int run_start_and_wait(char **prog, env_list *env, const char *dir, run_watch *watch, run_result *r)
{
    sigset_t old, waiting;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    run_signals_before_fork(&old, &waiting);
    int errpipe[2];
    if (pipe2(errpipe, O_CLOEXEC) != 0) {
        run_sig_end();
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 1;
    }
    run_settler settler;
    settler_open(&settler, dir); /* before the program starts: no file is missed */
    fflush(NULL);
    run_sig_before_program();
    pid_t pid = fork();
    if (pid < 0) {
        cgi_say("fork: %s", strerror(errno));
        run_sig_end();
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 1;
    }
    if (pid == 0) run_exec_child(prog, env, errpipe, &old);
    close(errpipe[1]);
    run_signals_after_fork(pid);
    r->pid = pid;
    watch->program = pid;

    int exec_errno = 0;
    if (read(errpipe[0], &exec_errno, sizeof exec_errno) == (ssize_t)sizeof exec_errno) r->exec_errno = exec_errno;
    close(errpipe[0]);

    int rc = run_wait_tree(pid, &settler, &waiting, watch, r);
    run_sig_end();
    if (rc != 0) return 1;
    settler_close(&settler);
    sigprocmask(SIG_SETMASK, &old, NULL);
    return 0;
}
