/* The fatal-signal hook. With CALLGUARD_SIGNALS=record, callguard installs
 * one handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT. It writes the
 * signal into the statistics file's header (two stores into the shared
 * mapping: async-signal-safe), then does what the program asked for that
 * signal: its own handler runs, with its mask and flags; without one the
 * default action applies (the process dies of the same signal, with a core
 * where the default makes one); an ignored signal stays ignored.
 *
 * The program's own handler may come before callguard's or after it:
 *   - before (a library constructor that ran first, ASan's): sigaction
 *     hands it back when ours is installed; ours calls it.
 *   - after (main, CPython's faulthandler, a JIT): sigaction() and signal()
 *     are defined by libcallguard too (signals_interpose.c). When
 *     libcallguard comes before libc in the lookup order (`callguard run
 *     --signals record` preloads it for that),
 *     a program that sets a handler for one of these signals sets "its"
 *     action, which ours calls, and reads back its own previous one; ours
 *     stays installed. For every other signal, or with the hook off, they
 *     are libc's. Not covered: a handler set with the raw system call, or
 *     through libc's internal paths (sigset, sysv_signal, bsd_signal: they
 *     do not go through sigaction's symbol), or set after the hook while
 *     libcallguard is not preloaded: then the program's replaces ours, the
 *     signal is not recorded, and the report says it does not know how the
 *     process ended. docs/report.md says the same.
 *
 * A program handler that returns from a fault it repaired (a JIT's guard
 * page, a garbage collector's safepoint) did not die: the record is taken
 * back. SIGABRT stays recorded: abort() does not return to its caller. */
#define _GNU_SOURCE
#include "signals.h"

#include "errors.h"
#include "stats.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

/* glibc's own sigaction, whatever the lookup order: the one we call. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static const int cgi_fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define CGI_NFATAL ((int)(sizeof cgi_fatal / sizeof *cgi_fatal))

int cgi_in_cli;
static _Atomic int cgi_hook_on;
/* The program's action for each signal: two copies, the current one named
 * by cur, so the handler reads a whole one while sigaction() writes the other. */
static struct sigaction cgi_prog[CGI_NFATAL][2];
static _Atomic int cgi_prog_cur[CGI_NFATAL];
/* sigaction() is async-signal-safe: writers take a spin lock, not a mutex. */
static atomic_flag cgi_prog_lock = ATOMIC_FLAG_INIT;

static int cgi_fatal_index(int sig)
{
    for (int i = 0; i < CGI_NFATAL; i++)
        if (cgi_fatal[i] == sig) return i;
    return -1;
}

static int cgi_has_handler(const struct sigaction *a)
{
    if (a->sa_flags & SA_SIGINFO) return a->sa_sigaction != NULL;
    return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

static void cgi_set_prog(int i, const struct sigaction *act)
{
    int next = 1 - atomic_load(&cgi_prog_cur[i]);
    cgi_prog[i][next] = *act;
    atomic_store(&cgi_prog_cur[i], next);
}

static void cgi_record(int sig)
{
    cgi_stats_region *r = cgi_stats;
    if (!r) return;
    atomic_store(&r->h.fatal_signal, sig);
    r->h.status = sig;
    atomic_store(&r->h.state, CGI_PROC_SIGNALED);
}

static void cgi_on_fatal(int sig, siginfo_t *info, void *uc)
{
    int saved = errno, i = cgi_fatal_index(sig);
    cgi_record(sig);
    struct sigaction p = cgi_prog[i][atomic_load(&cgi_prog_cur[i])];
    /* Sent (kill, raise, abort) rather than raised by a faulting instruction. */
    int sent = !info || info->si_code <= 0 || sig == SIGABRT;
    if (cgi_has_handler(&p)) {
        if (p.sa_flags & SA_RESETHAND) {
            struct sigaction dfl = {.sa_handler = SIG_DFL};
            cgi_set_prog(i, &dfl);
        }
        sigset_t old;
        pthread_sigmask(SIG_BLOCK, &p.sa_mask, &old);
        if (p.sa_flags & SA_SIGINFO) p.sa_sigaction(sig, info, uc);
        else p.sa_handler(sig);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        /* It returned: the program handled it. */
        if (sig != SIGABRT && cgi_stats) atomic_store(&cgi_stats->h.state, CGI_PROC_RUNNING);
        errno = saved;
        return;
    }
    if (p.sa_handler == SIG_IGN && sent) {
        if (cgi_stats) atomic_store(&cgi_stats->h.state, CGI_PROC_RUNNING);
        errno = saved;
        return;
    }
    /* The default action (a fault cannot be ignored either): die of it. A
     * sent signal is raised again, pending until we return; a faulting
     * instruction faults again once we return. */
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sigemptyset(&dfl.sa_mask);
    __sigaction(sig, &dfl, NULL);
    if (sent) raise(sig);
    errno = saved;
}

static int cgi_signals_install(void)
{
    struct sigaction ours = {.sa_sigaction = cgi_on_fatal, .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART};
    sigemptyset(&ours.sa_mask);
    for (int i = 0; i < CGI_NFATAL; i++) {
        struct sigaction old;
        if (__sigaction(cgi_fatal[i], NULL, &old) != 0) return cgi_fail(CG_EINVAL, "sigaction: %s", strerror(errno));
        if ((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == cgi_on_fatal) continue; /* installed already */
        cgi_set_prog(i, &old);
        if (__sigaction(cgi_fatal[i], &ours, NULL) != 0) return cgi_fail(CG_EINVAL, "sigaction: %s", strerror(errno));
    }
    atomic_store(&cgi_hook_on, 1);
    if (cgi_stats) atomic_store(&cgi_stats->h.signal_hook, 1);
    return CG_OK;
}

/* Puts the program's actions back in place of ours. */
static void cgi_signals_remove(void)
{
    if (!atomic_exchange(&cgi_hook_on, 0)) return;
    for (int i = 0; i < CGI_NFATAL; i++) __sigaction(cgi_fatal[i], &cgi_prog[i][atomic_load(&cgi_prog_cur[i])], NULL);
    if (cgi_stats) atomic_store(&cgi_stats->h.signal_hook, 0);
}

int cgi_signals_set(const char *v, int only_check)
{
    int record = strcmp(v, "record") == 0;
    if (!record && strcmp(v, "off") != 0)
        return cgi_fail(CG_EINVAL, "'%s': expected record (note the fatal signal a process dies of) or off", v);
    if (only_check) return CG_OK;
    if (!record) {
        cgi_signals_remove();
        return CG_OK;
    }
    return atomic_load(&cgi_hook_on) ? CG_OK : cgi_signals_install();
}

int cgi_signals_program_action(int sig, const struct sigaction *act, struct sigaction *old)
{
    int i = cgi_fatal_index(sig);
    if (i < 0 || !atomic_load_explicit(&cgi_hook_on, memory_order_acquire)) return 1;
    while (atomic_flag_test_and_set_explicit(&cgi_prog_lock, memory_order_acquire)) {
    }
    if (old) *old = cgi_prog[i][atomic_load(&cgi_prog_cur[i])];
    if (act) cgi_set_prog(i, act);
    atomic_flag_clear_explicit(&cgi_prog_lock, memory_order_release);
    return 0;
}
