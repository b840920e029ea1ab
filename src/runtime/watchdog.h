/* The watchdog (watchdog.c): one thread per process that reads the thread
 * slots about once a millisecond, so the call path needs no clock. It
 * times the clockless calls by sampling, marks the ones as long as a
 * stall, and reports hangs while they last (hang.c). */
#ifndef CGI_WATCHDOG_H
#define CGI_WATCHDOG_H

#include "internal.h"

/* Starts the process's watchdog if it wants one (statistics on, and
 * sampled timing or hang reports) and none runs yet. Any thread; no lock
 * held. Cheap after the first call. */
CGI_HIDDEN void cgi_watchdog_start(void);
/* Before a fork (the runtime's prepare handler): waits, at most 100 ms,
 * until a watchdog thread being started runs its own code. */
CGI_HIDDEN void cgi_watchdog_before_fork(void);
/* In a forked child: the parent's watchdog is not there; the child's first
 * counted call starts its own. */
CGI_HIDDEN void cgi_watchdog_after_fork_child(void);
/* At start-up, on the process's main thread: notes when that thread ends
 * (pthread_exit), so that the watchdog can tell it is the last thread
 * where /proc cannot be read. No-op on another thread. */
CGI_HIDDEN void cgi_watchdog_note_main(void);

/* At exit (the exit handlers, before the process's report is written):
 * a call that was in flight for the hang threshold and returned since
 * the watchdog's last tick is kept as a late call (hang.c), which that
 * tick would have done; then the watchdog ticks no more (the statistics
 * region holds still while the report reads it) until
 * cgi_watchdog_release(the value returned). Returns 0, having done
 * nothing, where no watchdog runs or its tick lasts over 10 ms. */
CGI_HIDDEN int cgi_watchdog_hold_at_exit(void);
/* Holds the watchdog between two ticks, no more (a copy of the region: its hang and late pages hold
 * still), and returns 1; 0 where it runs no ticks or the exit holds it already. cgi_watchdog_release. */
CGI_HIDDEN int cgi_watchdog_pause(void);
CGI_HIDDEN void cgi_watchdog_release(int held);

/* One call in flight, as the watchdog saw it at a tick. */
typedef struct cgi_wd_call {
    unsigned slot;
    uint64_t seq;
    uint64_t age_ns;
} cgi_wd_call;

/* hang.c: writes a hang report of the calls in flight v[0..n) (at least
 * one of them in flight for CALLGUARD_HANG_MS) to stderr and into the
 * statistics file. `now_ns` is since start-up. Watchdog thread only. */
CGI_HIDDEN void cgi_hang_report(const cgi_wd_call *v, unsigned n, uint64_t now_ns);
/* hang.c: looks up, once, what a hang report needs that only a thread
 * making a guarded call may look up (the dynamic loader's lock, which the
 * watchdog must never take). Called by cgi_watchdog_start. */
CGI_HIDDEN void cgi_hang_prepare(void);
/* hang.c: how many threads other than the caller wait for the GIL now
 * (asleep on a futex in CPython's runtime state); -1 when not known. For a
 * stall as it ends, on its thread (stall.c). */
CGI_HIDDEN int cgi_hang_gil_waiters(void);
/* A call the watchdog saw in flight for the hang threshold, found
 * returned: its slot and number, its thread and site then, and how long
 * it was in flight. */
typedef struct cgi_wd_late {
    unsigned slot;
    int32_t tid;
    uint64_t seq, ns;
    struct cg_counters *c;
} cgi_wd_late;
/* hang.c: keeps the late calls v[0..n) among the slowest in the
 * statistics file's late page, each as the hang page has it. The watchdog
 * thread, or the exiting thread while the watchdog does not tick. */
CGI_HIDDEN void cgi_hang_late(const cgi_wd_late *v, unsigned n, uint64_t now_ns);
/* hang.c: the calls last reported have all returned. */
CGI_HIDDEN void cgi_hang_over(uint64_t now_ns);
/* hang.c: notes which file fd 2 is at start-up: hang reports are written
 * to fd 2 only while it is still that file. */
CGI_HIDDEN void cgi_hang_note_stderr(void);

#endif
