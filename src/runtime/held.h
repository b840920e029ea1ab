/* A call left without returning (held.c; docs/design.md, "A call left
 * without returning"): what a general-path call holds while in its driver
 * call, kept off the stack in one record per thread. */
#ifndef CGI_HELD_H
#define CGI_HELD_H

#include "internal.h"
#include "domain.h"
#include "onstack.h"
#include "stats.h"
#include "threads.h"

typedef struct cgi_held {
    uint32_t stage;        /* 1: in its driver call, holding what follows */
    uint32_t domain;       /* its domain's id, or 0 */
    uint32_t threads;      /* CGI_DOM_CHECK | CGI_DOM_HLOCK: its thread rules' state is in tc */
    cgi_dlock dlock;       /* what the domain's lock took, for its unlock */
    cg_counters *peaks;    /* the site's counters whose threads inside count it, or NULL */
    cgi_onstack_seen seen; /* the outer call a nested one found on the stack */
    cgi_thr_call tc;
} cgi_held;

/* This thread's record, allocated at its first guarded-path call. One
 * pointer of initial-exec TLS. */
CGI_HIDDEN extern __thread cgi_held *cgi_my_held __attribute__((tls_model("initial-exec")));

/* At start-up: the key of each thread's record (made before the statistics
 * slots' key, so its destructor runs first). */
CGI_HIDDEN void cgi_held_init(void);
/* A thread's first guarded-path call, with its runtime left and no lock
 * held: its record (the process's first also loads the stack walker: a
 * dlopen, which waits for the dynamic loader's lock: never while holding
 * the GIL that the loader lock's holder may wait for, docs/hip.md's loader
 * lock test). Out of memory, the call keeps its record in `spare`, on its
 * own stack: then nothing can be given back for it. */
CGI_HIDDEN __attribute__((noinline, cold)) cgi_held *cgi_held_new(cgi_held *spare);
/* A thread that looks inside a call (nested): is that call still on its
 * stack? If not, what it left behind is given back and the thread is
 * outside any call. Walks the stack (onstack.c): reached only by a nested
 * call or by the first call after a thread jumped out of one. */
CGI_HIDDEN __attribute__((noinline)) int cgi_still_inside(const cg_site *s);
/* The forking thread's call, if any, is not the child's. */
CGI_HIDDEN void cgi_held_after_fork_child(void);

#endif
