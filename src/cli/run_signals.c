/* callguard run: SIGINT, SIGTERM, SIGHUP and SIGQUIT that come to callguard
 * reach the program once, as they would have reached it run plainly
 * (docs/design.md, "The command line").
 *
 * A signal sent to callguard's pid alone (Jupyter's fallback, `kill PID`,
 * subprocess's send_signal, a supervisor's) is passed to the program. One
 * sent to the whole process group (the terminal's Ctrl-C, `kill -INT
 * -PGID`, Jupyter's interrupt, timeout(1)'s, the program's own `kill 0`) or
 * to every process (`kill -1`, a service manager's to each process of its
 * cgroup) reached the program already, and is not sent again. siginfo
 * names the sender, never whether it went to the group: sudo passes SIGINT
 * on only when its sender is outside sudo's process group, which sends a
 * supervisor's group signal (Jupyter's) twice and drops the signal of a
 * parent that shares the group (subprocess's send_signal). So a witness
 * process, made first (a child of callguard's, named cg-sigwatch), stays
 * in callguard's process group with every signal blocked: a signal to the
 * group (or to all) is left pending in it too, one to callguard alone is
 * not. Asked about a signal, it says whether it has it, and takes it.
 * Without a witness (it could not be made, or stopped answering), only a
 * signal the kernel sent (the terminal's) counts as the group's.
 *
 * The handler only notes a signal; callguard waits with the four unblocked
 * in ppoll alone (run_wait.c) and passes them on after. The program starts
 * with each one's action as callguard found it: one ignored (nohup, a
 * background job of a script) stays ignored in the program, which may set
 * its own handler (mpirun does), as it would run plainly, and a signal to
 * callguard's pid is still passed on to it. */
#define _GNU_SOURCE
#include "run.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RUN_NSIGS 4
/* How long a signal to callguard alone waits for one to the group that
 * follows it at once (timeout(1)'s pair) before it is passed on. */
#define RUN_SIG_SETTLE_NS 50000000L
static const int run_sigs[RUN_NSIGS] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static struct sigaction as_was[RUN_NSIGS]; /* each one's action at start */
static volatile sig_atomic_t came[RUN_NSIGS];
static siginfo_t came_info[RUN_NSIGS]; /* the last of each that came */
static int early[RUN_NSIGS];           /* came before the program existed: it has none */
static pid_t program;                  /* 0: none (not yet, or reaped) */
static int witness = -1;               /* our end of its socket */
static pid_t witness_pid;              /* its pid, until reaped */
/* When the first of them came (CLOCK_MONOTONIC; 0: none). */
static volatile sig_atomic_t stopped_s;
static volatile long stopped_ns;

static void run_sig_note(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    if (!stopped_s) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts); /* async-signal-safe */
        stopped_ns = ts.tv_nsec, stopped_s = (sig_atomic_t)ts.tv_sec + 1;
    }
    for (int i = 0; i < RUN_NSIGS; i++)
        if (run_sigs[i] == sig) came_info[i] = *info, came[i] = 1;
}

int run_stopped_at(struct timespec *at)
{
    if (!stopped_s) return 0;
    at->tv_sec = stopped_s - 1, at->tv_nsec = stopped_ns;
    return 1;
}

/* ---- the witness ------------------------------------------------------------ */

/* Its name in ps and pkill is not callguard's command line, so `pkill -f
 * 'callguard run'` signals callguard alone (and the signal is passed on):
 * its argv, which /proc/PID/cmdline shows, is overwritten, once checked to
 * be where /proc/self/stat says it is. */
static void witness_rename(void)
{
    static const char name[] = "cg-sigwatch";
    prctl(PR_SET_NAME, name);
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    char *p = strrchr(buf, ')');
    unsigned long start = 0, end = 0;
    for (int field = 2; p && field < 49; field++) { /* arg_start and arg_end are fields 48 and 49 */
        p = strchr(p + 1, ' ');
        if (p && field + 1 == 48) start = strtoul(p + 1, NULL, 10);
        if (p && field + 1 == 49) end = strtoul(p + 1, NULL, 10);
    }
    if (!start || start != (unsigned long)program_invocation_name || end <= start + sizeof name) return;
    memset((char *)start, 0, end - start);
    memcpy((char *)start, name, sizeof name);
}

/* Closes descriptors lo..hi: close_range where the kernel has it (glibc
 * before 2.34, which the wheel is built for, has no wrapper), else one by
 * one up to the descriptor limit. */
static void witness_close(unsigned lo, unsigned hi)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, lo, hi, 0) == 0) return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536) max = 65536;
    for (long fd = lo; fd < max && (unsigned long)fd <= hi; fd++)
        close((int)fd);
}

/* Every signal blocked, nothing of callguard's open but its socket, it
 * answers each question (a byte: which of the four) with which of them it
 * has pending, and takes those. Ends when callguard closes its end. */
static _Noreturn void witness_main(int sock)
{
    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    if (sock > 0) witness_close(0, (unsigned)sock - 1);
    witness_close((unsigned)sock + 1, ~0u);
    if (chdir("/") != 0) {} /* holds no file system busy */
    witness_rename();
    for (;;) {
        unsigned char q, a = 0;
        ssize_t n = recv(sock, &q, 1, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n != 1) _exit(0);
        sigset_t pending, one;
        sigpending(&pending);
        for (int i = 0; i < RUN_NSIGS; i++)
            if ((q >> i & 1) && sigismember(&pending, run_sigs[i])) {
                struct timespec zero = {0, 0};
                sigemptyset(&one);
                sigaddset(&one, run_sigs[i]);
                sigtimedwait(&one, NULL, &zero);
                a |= (unsigned char)(1u << i);
            }
        if (send(sock, &a, 1, MSG_NOSIGNAL) != 1) _exit(0);
    }
}

/* Made with the four blocked already. A child of callguard's, which reaps
 * it (run_sig_witness): it dies with callguard (its socket's end, and
 * SIGKILL if callguard is killed). */
static void witness_start(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(sv[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(0);
        witness_main(sv[1]);
    }
    close(sv[1]);
    if (pid > 0)
        witness = sv[0], witness_pid = pid;
    else
        close(sv[0]);
}

/* Waits until a kill(2) of a group (or of all) that is under way has
 * reached each of its processes: it holds the kernel's tasklist lock for
 * reading while it does, and setpgid(2) takes it for writing. It changes
 * nothing: callguard stays in its group. */
static void run_sig_barrier(void) { setpgid(0, getpgrp()); }

/* 1: the witness had signal i too, so it was sent to the group or to all;
 * 0: to callguard alone; -1: no witness (it stopped answering: none since). */
static int witness_saw(int i)
{
    if (witness < 0) return -1;
    run_sig_barrier(); /* a kill of the group that reached callguard has reached the witness */
    unsigned char q = (unsigned char)(1u << i), a = 0;
    struct pollfd p = {witness, POLLIN, 0};
    ssize_t sent, got = 0;
    int ready = 0;
    while ((sent = send(witness, &q, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
    while (sent == 1 && (ready = poll(&p, 1, 1000)) < 0 && errno == EINTR) {} /* SIGIO: a lease broken */
    if (sent == 1 && ready == 1)
        while ((got = recv(witness, &a, 1, 0)) < 0 && errno == EINTR) {}
    if (got != 1) {
        close(witness);
        witness = -1;
        return -1;
    }
    return a >> i & 1;
}

/* The witness had signal i, so it went to the group: the same kill came to
 * callguard too, and when that was after the one being passed on (the
 * witness was asked before it came), it is pending here: taken, so it is
 * not judged again as one to callguard alone. */
static void run_sig_take_own(int i)
{
    sigset_t pending, one;
    struct timespec zero = {0, 0};
    run_sig_barrier();
    sigpending(&pending);
    sigemptyset(&one);
    sigaddset(&one, run_sigs[i]);
    if (sigismember(&pending, run_sigs[i])) sigtimedwait(&one, NULL, &zero);
}

/* Whether the program has signal i already. */
static int program_has_it(int i)
{
    const siginfo_t *in = &came_info[i];
    int in_group = getpgid(program) == getpgrp(); /* else nothing sent to the group reached it */
    int user = in->si_code == SI_USER || in->si_code == SI_QUEUE || in->si_code == SI_TKILL;
    int own = user && in->si_pid == program; /* it sent it: to its group, or to callguard alone */
    int saw = witness_saw(i);                /* asked first: it takes the signal, so the next one is judged anew */
    if (saw == 0 && in_group && !own) {
        /* timeout(1) sends to the program's pid, then at once to its group:
         * plainly the program gets one (the two come together). A signal
         * to the group this soon after is taken as that same one. */
        struct timespec settle = {0, RUN_SIG_SETTLE_NS};
        nanosleep(&settle, NULL);
        saw = witness_saw(i);
    }
    if (saw > 0) run_sig_take_own(i);
    if (!in_group) return 0;
    if (own) return 1;
    return saw >= 0 ? saw : in->si_code == SI_KERNEL; /* no witness: the terminal's, to its foreground group */
}

/* ---- callguard run's side ------------------------------------------------------ */

void run_sig_start(sigset_t *block, sigset_t *waiting)
{
    struct sigaction sa = {0};
    sa.sa_sigaction = run_sig_note;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    for (int i = 0; i < RUN_NSIGS; i++) {
        sigaction(run_sigs[i], NULL, &as_was[i]);
        sigaddset(block, run_sigs[i]);
        sigdelset(waiting, run_sigs[i]);
    }
    sigprocmask(SIG_BLOCK, block, NULL);
    for (int i = 0; i < RUN_NSIGS; i++)
        sigaction(run_sigs[i], &sa, NULL);
    witness_start();
}

void run_sig_in_child(void)
{
    if (witness >= 0) close(witness);
    for (int i = 0; i < RUN_NSIGS; i++)
        sigaction(run_sigs[i], &as_was[i], NULL);
}

/* One that came before the program's fork never reached it, wherever it was
 * sent: passed on whatever the witness says. (One sent to the group in the
 * moment between this look and the fork is taken as the program's.) */
void run_sig_before_program(void)
{
    sigset_t pending;
    sigpending(&pending);
    for (int i = 0; i < RUN_NSIGS; i++)
        early[i] = sigismember(&pending, run_sigs[i]);
}

void run_sig_program(pid_t pid) { program = pid; }

int run_sig_is_witness(pid_t pid) { return witness_pid && pid == witness_pid; }

int run_sig_witness(pid_t pid)
{
    if (!witness_pid || pid != witness_pid) return 0;
    witness_pid = 0;
    return 1;
}

void run_sig_pass(void)
{
    for (int i = 0; i < RUN_NSIGS; i++) {
        if (!came[i]) continue;
        came[i] = 0;
        if (program <= 0) continue;
        if (early[i]) {
            early[i] = 0;
            witness_saw(i);
            kill(program, run_sigs[i]);
        } else if (!program_has_it(i)) {
            kill(program, run_sigs[i]);
        }
    }
}

void run_sig_end(void)
{
    program = 0;
    if (witness >= 0) close(witness);
    witness = -1;
}
