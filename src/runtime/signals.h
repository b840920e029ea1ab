/* The opt-in hook for fatal signals (signals.c, CALLGUARD_SIGNALS=record):
 * a process that dies of SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT says so
 * in its statistics file, so a report can name the signal even when
 * callguard did not reap the process (a grandchild its own parent waited for). */
#ifndef CGI_SIGNALS_H
#define CGI_SIGNALS_H

#include "internal.h"

/* "off" or "record". Installs the handlers for "record" unless only_check
 * (the callguard command checks values for the program it starts).
 * Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_signals_set(const char *value, int only_check);

/* For the interposed sigaction(): while the hook is on and sig is one of
 * its signals, reads and sets the program's action (the one the hook
 * chains to) and returns 0; else returns 1 (libc's sigaction applies). */
struct sigaction;
/* 1 while the hook is installed: what the interposed sigaction() reads first
 * (a plain load: that function is not instrumented, see signals_interpose.c). */
CGI_HIDDEN extern volatile int cgi_signals_on;
CGI_HIDDEN int cgi_signals_program_action(int sig, const struct sigaction *act, struct sigaction *old);

/* Lets go of what a thread of the parent held (the atfork child handler). */
CGI_HIDDEN void cgi_signals_after_fork_child(void);

/* Set in the callguard command's own process: values are checked, nothing installed. */
CGI_HIDDEN extern int cgi_in_cli;

#endif
