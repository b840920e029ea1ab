/* Is a guarded call still on this thread's stack (onstack.c)? */
#ifndef CGI_ONSTACK_H
#define CGI_ONSTACK_H

#include "internal.h"

/* Loads the stack walker (libgcc's unwinder, which glibc's own backtrace
 * and pthread_cancel use), once per process: not from a signal handler. */
CGI_HIDDEN void cgi_onstack_prime(void);
/* The outer call's frame a walk found (a thread's, kept by the caller):
 * the stack word that holds its return address, and that address. Later
 * nested calls in the same outer call find it there and walk no more. */
typedef struct cgi_onstack_seen {
    const uintptr_t *word;
    uintptr_t ip;
} cgi_onstack_seen;
/* Called from a guarded call of `current`'s on a thread that looks inside
 * another: 1 when a frame of callguard's (the runtime, a layer, a shim)
 * is on this thread's stack above the current call's own, or when that
 * cannot be told; 0 only when the walk reached the stack's end without
 * meeting one (the call it was inside was left without returning). */
CGI_HIDDEN int cgi_outer_call_on_stack(const cg_layer *current, cgi_onstack_seen *seen);

#endif
