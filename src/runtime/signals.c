/* The fatal-signal hook. With CALLGUARD_SIGNALS=record, callguard installs
 * its handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT, and changes
 * nothing else about how the program handles them:
 *   - the program's handler: the kernel runs ours with the program's own
 *     sa_mask and flags (SA_NODEFER, SA_ONSTACK, SA_RESTART ...), so the mask
 *     inside the handler, and after a longjmp out of it, is the one the
 *     program asked for; ours then jumps to the program's handler (a tail
 *     call: its frame is gone before the program's handler runs, so an
 *     alternate stack that fits the program fits the hook). SA_RESETHAND is
 *     applied by ours: the program's action becomes SIG_DFL and ours stays,
 *     to record the death that may follow. Nothing is recorded here but
 *     SIGABRT (abort() does not return to its caller): a handler that
 *     repairs a fault or jumps out of it did not die, and one that gives up
 *     puts SIG_DFL back and dies through the next branch.
 *   - the default action: ours writes the signal into the statistics
 *     file's header (two stores into the shared mapping: async-signal-safe),
 *     puts SIG_DFL back and raises the signal again (a faulting instruction
 *     faults again once we return): the process dies of the same signal,
 *     with a core where the default makes one.
 *   - an ignored signal: SIG_IGN itself is installed, not ours.
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
 * sigaction() is async-signal-safe, so a handler may call it while the
 * thread it interrupted is inside it: a writer blocks every signal while it
 * holds a signal's action, and our handler reads the action without a lock
 * (a sequence count), so neither waits for its own thread. */
#define _GNU_SOURCE
#include "signals.h"

#include "../common/errors.h"
#include "stats.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc's own sigaction, whatever the lookup order: the one we call. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

static const int cgi_fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define CGI_NFATAL ((int)(sizeof cgi_fatal / sizeof *cgi_fatal))

int cgi_in_cli;
static _Atomic int cgi_hook_on;
volatile int cgi_signals_on;

/* The program's action for each signal. cgi_prog is read and written only
 * by a writer holding the signal (CGI_WRITING); the handler reads the two
 * words it needs from the atomic copies, checking cgi_seq before and after
 * (a seqlock). cgi_seq: CGI_WRITING while a writer holds it, CGI_RESET once
 * SA_RESETHAND made the action SIG_DFL, and a count of the writes above. */
enum { CGI_WRITING = 1, CGI_RESET = 2, CGI_WRITE = 4 };
static struct sigaction cgi_prog[CGI_NFATAL];
static _Atomic(void *) cgi_prog_fn[CGI_NFATAL];
static _Atomic int cgi_prog_flags[CGI_NFATAL];
static _Atomic unsigned cgi_seq[CGI_NFATAL];

/* The kernel's sigset, as rt_sigprocmask and rt_sigaction take it: glibc's
 * sigset_t is 128 bytes, and both run on the program's signal stack. */
typedef unsigned long cgi_ksigset[_NSIG / 8 / sizeof(unsigned long)];

/* For what runs in a fatal signal's handler: a sanitizer's checks would
 * keep our frame (no jump to the program's handler) and grow it, on what
 * may be the program's small alternate stack. */
#define CGI_HANDLER_CODE __attribute__((no_sanitize("address", "undefined", "thread")))

CGI_HANDLER_CODE static int cgi_fatal_index(int sig)
{
    for (int i = 0; i < CGI_NFATAL; i++)
        if (cgi_fatal[i] == sig) return i;
    return -1;
}

CGI_HANDLER_CODE static int cgi_is_handler(void *fn) { return fn != (void *)SIG_DFL && fn != (void *)SIG_IGN; }

/* Holds signal i's action against other threads' writers, with every signal
 * blocked so that no handler of this thread's waits for it. Returns the
 * sequence count to give back to cgi_unlock. */
static unsigned cgi_lock(int i, cgi_ksigset saved)
{
    cgi_ksigset all;
    memset(all, 0xff, sizeof all);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, all, saved, sizeof all);
    unsigned s = atomic_load_explicit(&cgi_seq[i], memory_order_relaxed);
    for (;;) {
        if (s & CGI_WRITING)
            s = atomic_load_explicit(&cgi_seq[i], memory_order_relaxed);
        else if (atomic_compare_exchange_weak_explicit(&cgi_seq[i], &s, s | CGI_WRITING, memory_order_acquire,
                                                       memory_order_relaxed))
            break;
    }
    /* A handler that reads what follows also reads the bit set. */
    atomic_thread_fence(memory_order_release);
    return s;
}

static void cgi_unlock(int i, unsigned s, const cgi_ksigset saved)
{
    atomic_store_explicit(&cgi_seq[i], s & ~(unsigned)CGI_WRITING, memory_order_release);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, saved, NULL, sizeof(cgi_ksigset));
}

static void cgi_on_fatal(int sig, siginfo_t *info, void *uc);

/* With signal i held, after the program's action cgi_prog[i] changed: the
 * kernel's becomes ours with the program's mask and flags (it runs the
 * program's handler), ours with our own (the default action), or SIG_IGN
 * itself. Built in cgi_scratch[i], not on the stack: a handler on a small
 * alternate stack may call sigaction(). */
static struct sigaction cgi_scratch[CGI_NFATAL];

static void cgi_install(int i)
{
    atomic_store_explicit(&cgi_prog_fn[i], (void *)cgi_prog[i].sa_handler, memory_order_relaxed);
    atomic_store_explicit(&cgi_prog_flags[i], cgi_prog[i].sa_flags, memory_order_relaxed);
    struct sigaction *k = &cgi_scratch[i];
    *k = cgi_prog[i];
    if (cgi_is_handler((void *)k->sa_handler)) {
        k->sa_sigaction = cgi_on_fatal;
        k->sa_flags = (k->sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
    } else if (k->sa_handler == SIG_DFL) {
        k->sa_sigaction = cgi_on_fatal;
        k->sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        memset(&k->sa_mask, 0, sizeof k->sa_mask); /* sigemptyset, but no PLT call (see cgi_die_of) */
    }
    __sigaction(cgi_fatal[i], k, NULL);
}

CGI_HANDLER_CODE static void cgi_record(int sig)
{
    cgi_stats_region *r = cgi_stats;
    if (!r) return;
    atomic_store(&r->h.fatal_signal, sig);
    r->h.status = sig;
    atomic_store(&r->h.state, CGI_PROC_SIGNALED);
}

/* The default action (a fault cannot be ignored either): die of it. A sent
 * signal is raised again, pending until we return; a faulting instruction
 * faults again once we return. On what may be a small alternate stack, so
 * raw system calls: glibc's sigaction and raise put a few hundred bytes
 * there, and a first call through the PLT (getpid, say) the dynamic
 * linker's lazy binding, a few thousand. syscall() was bound when the hook
 * was installed; errno is left alone (none of these fails). */
CGI_HANDLER_CODE static __attribute__((noinline, cold)) void cgi_die_of(int sig, siginfo_t *info, void *fn)
{
    int sent = !info || info->si_code <= 0 || sig == SIGABRT;
    if (fn == (void *)SIG_IGN && sent) return; /* SIG_IGN set while this one was on its way */
    cgi_record(sig);
    static const unsigned long dfl[8]; /* SIG_DFL, no flags, no mask: zeros in every layout */
    syscall(SYS_rt_sigaction, sig, dfl, NULL, sizeof(cgi_ksigset));
    if (sent) syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
}

CGI_HANDLER_CODE static void cgi_on_fatal(int sig, siginfo_t *info, void *uc)
{
    int i = cgi_fatal_index(sig);
    void *fn;
    int flags;
    for (;;) {
        /* A writer with the bit set is another thread: this one's block every signal. */
        unsigned s = atomic_load_explicit(&cgi_seq[i], memory_order_acquire);
        if (s & CGI_WRITING) continue;
        fn = s & CGI_RESET ? (void *)SIG_DFL : atomic_load_explicit(&cgi_prog_fn[i], memory_order_relaxed);
        flags = atomic_load_explicit(&cgi_prog_flags[i], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (cgi_is_handler(fn) && (flags & SA_RESETHAND)) {
            if (atomic_compare_exchange_strong(&cgi_seq[i], &s, s | CGI_RESET)) break;
        } else if (atomic_load_explicit(&cgi_seq[i], memory_order_relaxed) == s) {
            break;
        }
    }
    if (!cgi_is_handler(fn)) {
        cgi_die_of(sig, info, fn);
        return;
    }
    if (sig == SIGABRT) cgi_record(sig);
    /* Last, so the compiler makes it a jump: the program's handler gets
     * the stack as the kernel left it. */
    if (flags & SA_SIGINFO)
        ((void (*)(int, siginfo_t *, void *))fn)(sig, info, uc);
    else
        ((void (*)(int))fn)(sig);
}

static int cgi_signals_install(void)
{
    for (int i = 0; i < CGI_NFATAL; i++) {
        struct sigaction old;
        cgi_ksigset saved;
        unsigned s = cgi_lock(i, saved);
        int rc = __sigaction(cgi_fatal[i], NULL, &old);
        /* Ours already: the program's action is the one held. */
        if (rc == 0 && !((old.sa_flags & SA_SIGINFO) && old.sa_sigaction == cgi_on_fatal)) {
            cgi_prog[i] = old;
            cgi_install(i);
            s = (s & ~(unsigned)CGI_RESET) + CGI_WRITE;
        }
        cgi_unlock(i, s, saved);
        if (rc != 0) return cgi_fail(CG_EINVAL, "sigaction: %s", strerror(errno));
    }
    atomic_store(&cgi_hook_on, 1);
    cgi_signals_on = 1;
    if (cgi_stats) atomic_store(&cgi_stats->h.signal_hook, 1);
    return CG_OK;
}

/* Puts the program's actions back in place of ours. */
static void cgi_signals_remove(void)
{
    if (!atomic_exchange(&cgi_hook_on, 0)) return;
    cgi_signals_on = 0;
    for (int i = 0; i < CGI_NFATAL; i++) {
        cgi_ksigset saved;
        unsigned s = cgi_lock(i, saved);
        struct sigaction a = cgi_prog[i];
        if (s & CGI_RESET) a.sa_handler = SIG_DFL;
        __sigaction(cgi_fatal[i], &a, NULL);
        cgi_unlock(i, s, saved);
    }
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
    /* No copy on the stack (a handler on a small alternate stack may be
     * here): *act and *old are read and written with every signal blocked,
     * where a bad pointer kills the process as a blocked fault does. The
     * previous action waits in cgi_scratch[i]: act and old may be one. */
    cgi_ksigset saved;
    unsigned s = cgi_lock(i, saved);
    cgi_scratch[i] = cgi_prog[i];
    /* SA_RESETHAND resets the handler alone, as the kernel does. */
    if (s & CGI_RESET) cgi_scratch[i].sa_handler = SIG_DFL;
    if (act) cgi_prog[i] = *act;
    if (old) *old = cgi_scratch[i];
    if (act) {
        cgi_install(i);
        s = (s & ~(unsigned)CGI_RESET) + CGI_WRITE;
    }
    cgi_unlock(i, s, saved);
    return 0;
}

void cgi_signals_after_fork_child(void)
{
    /* A writer in another thread of the parent never lets go in the child. */
    for (int i = 0; i < CGI_NFATAL; i++)
        atomic_fetch_and(&cgi_seq[i], ~(unsigned)CGI_WRITING);
}
