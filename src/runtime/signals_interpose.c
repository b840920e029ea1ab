/* The program's sigaction() and signal(), defined by libcallguard so that,
 * where it comes before libc in the lookup order (`callguard run --signals
 * record` preloads it), a handler the program sets for one of the hook's
 * signals becomes the one the hook chains to instead of replacing the hook
 * (signals.c says what is covered). Every other call is libc's. A file of
 * its own: a program linking libcallguard's objects statically (the fuzz
 * harnesses) does not get these unless it asks. */
#define _GNU_SOURCE
#include "signals.h"

#include <errno.h>
#include <signal.h>

/* CGI_UNINSTRUMENTED: ThreadSanitizer's runtime calls the next sigaction
 * (this one) while it starts. Only with the hook on does this call into the
 * rest of callguard. */

/* glibc's own, whatever the lookup order. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
extern sighandler_t bsd_signal(int sig, sighandler_t handler);

CGI_UNINSTRUMENTED __attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act,
                                                                        struct sigaction *old)
{
    if (cgi_signals_on && cgi_signals_program_action(sig, act, old) == 0) return 0;
    return __sigaction(sig, act, old);
}

/* glibc's signal(): BSD semantics (SA_RESTART, the signal blocked in its handler). */
CGI_UNINSTRUMENTED __attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler)
{
    if (!cgi_signals_on || handler == SIG_ERR) return bsd_signal(sig, handler);
    /* The mask {sig}, set by hand: a first call of sigaddset through the PLT
     * would run the dynamic linker's lazy binding, a few thousand bytes,
     * on what may be a small alternate stack (a handler putting SIG_DFL back). */
    struct sigaction act = {.sa_handler = handler, .sa_flags = SA_RESTART}, old;
    if (sig > 0 && sig < _NSIG) {
        const unsigned bits = 8 * sizeof act.sa_mask.__val[0];
        act.sa_mask.__val[(sig - 1) / bits] |= 1UL << ((sig - 1) % bits);
    }
    if (cgi_signals_program_action(sig, &act, &old) == 0) return old.sa_handler;
    return bsd_signal(sig, handler);
}
