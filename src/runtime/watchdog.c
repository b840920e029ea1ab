/* The watchdog: a thread that reads the thread slots so that counted calls
 * need no clock (docs/report.md, "Sampled times").
 *
 * A counted call only numbers itself in its thread's slot, names its site
 * there, and clears the site as it leaves (short.c). About once a
 * millisecond the watchdog reads every slot: each call in flight adds the
 * time since the previous tick to its site's total (time by sampling), a
 * call seen at two ticks with the same number has lasted at least the time
 * between them (its age), and a call older than the stall limit is marked
 * in its slot, so that its thread, as it leaves and still holding what it
 * held, records the stall (short.c, cgi_leave_marked). Calls of the general
 * path read the clock themselves (`timed`); the watchdog only ages them.
 * A call in flight for the hang threshold (1 s, or CALLGUARD_HANG_MS) has
 * every call in flight written to the statistics file's hang page, and,
 * with CALLGUARD_HANG_MS, to stderr (hang.c): nothing per call pays for it.
 * A reader's request for every Python thread's stack (`callguard status`)
 * is one word of the statistics header it looks at each tick (pystacks.h).
 *
 * The watchdog never calls into an interpreter and takes no lock the
 * program can hold: it reads and writes the statistics region with atomics
 * and writes to stderr with write(2). It starts at the first counted call
 * (never when statistics are off), with every signal blocked, detached;
 * after a fork the child starts its own at its first counted call. When
 * nothing is in flight and no call was made for a second it ticks ten
 * times a second, and it ends when it finds itself the process's last
 * thread (a program whose main thread called pthread_exit): /proc/self/task
 * says so, or, where /proc cannot be read (a container or sandbox without
 * it), the main thread's end noted by a thread-specific destructor and
 * every thread that ever made a counted call gone (tgkill's ESRCH). A
 * thread that never made one is not seen then: the watchdog may end
 * before it, and the next counted call starts a new watchdog. */
#define _GNU_SOURCE
#include "watchdog.h"

#include "clock.h"
#include "pystacks.h"
#include "site.h"
#include "stats.h"
#include "trace.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CGI_WD_TICK_NS 1000000u   /* 1 kHz while calls are made */
#define CGI_WD_SLOW_NS 100000000u /* 10 Hz when nothing was in flight ... */
#define CGI_WD_IDLE_TICKS 1000u   /* ... for this many ticks (a second) */
#define CGI_WD_ALONE_EVERY 10u    /* slow ticks between looks at the thread count */

/* 0: none; 1: starting; 2: could not start (not retried); 3: running (its
 * thread has begun cgi_wd_main). */
static _Atomic int cgi_wd_state;
static int cgi_wd_forked; /* this process is a forked child (TSan kills one that starts a thread) */

/* What the watchdog saw of each slot at its last tick (its own memory). */
static struct cgi_wd_seen {
    uint64_t seq;     /* the call's number */
    uint64_t first;   /* ticks when first seen in flight */
    uint64_t marked;  /* the last call marked as a stall */
    uint64_t entered; /* ticks when the call entered (as the tick read it) */
    int inflight;
    int hung;          /* the call was in flight for the hang threshold: a late call when it returns */
    int32_t tid;       /* its thread, while hung */
    cg_counters *site; /* its site, while hung */
} cgi_wd_seen[CGI_STATS_MAX_SLOTS];
static cgi_wd_call cgi_wd_calls[CGI_STATS_MAX_SLOTS];
static cgi_wd_late cgi_wd_lates[CGI_STATS_MAX_SLOTS];
static uint64_t cgi_wd_sig; /* the hung calls last reported; 0: none */
/* 1 while a tick runs, or the exit's look for late calls (cgi_watchdog_at_exit):
 * what the watchdog saw is touched by one of them at a time. */
static _Atomic int cgi_wd_busy;
static uint32_t cgi_wd_threads_done; /* the last request for the Python threads answered (pystacks.h) */

/* The main thread's end (cgi_watchdog_note_main): a thread-specific value
 * on it, whose destructor runs when it calls pthread_exit. */
static pthread_key_t cgi_wd_main_key;
static int cgi_wd_main_key_ok;
static _Atomic int cgi_wd_main_known; /* its end will be noted */
static _Atomic int cgi_wd_main_ended;

static void cgi_wd_main_gone(void *p)
{
    (void)p;
    atomic_store(&cgi_wd_main_ended, 1);
}

static void cgi_wd_main_key_create(void)
{
    cgi_wd_main_key_ok = pthread_key_create(&cgi_wd_main_key, cgi_wd_main_gone) == 0;
}

void cgi_watchdog_note_main(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (syscall(SYS_gettid) != getpid()) return; /* libcallguard dlopen'd on another thread: unknown */
    pthread_once(&once, cgi_wd_main_key_create);
    atomic_store(&cgi_wd_main_ended, 0);
    atomic_store(&cgi_wd_main_known, cgi_wd_main_key_ok && pthread_setspecific(cgi_wd_main_key, (void *)1) == 0);
}

/* Without /proc: has the main thread ended, and every thread that claimed
 * a slot (made a counted call) too? Threads that never did are not seen. */
static int cgi_wd_alone_by_slots(void)
{
    if (!atomic_load(&cgi_wd_main_known) || !atomic_load(&cgi_wd_main_ended)) return 0;
    pid_t pid = getpid();
    unsigned used = atomic_load(&cgi_slots_used);
    if (used > CGI_STATS_MAX_SLOTS) used = CGI_STATS_MAX_SLOTS;
    for (unsigned i = 0; i < used; i++) {
        int32_t tid = atomic_load_explicit(&cgi_stats->slot[i].tid, memory_order_relaxed);
        if (tid < 0) return 0;                /* being claimed */
        if (tid == 0 || tid == pid) continue; /* free; the main thread, a zombie until the last one ends */
        if (syscall(SYS_tgkill, pid, tid, 0) == 0 || errno != ESRCH) return 0;
    }
    return 1;
}

/* Is this the process's only live thread? A main thread that ended with
 * pthread_exit stays a zombie in the count (/proc/self/stat's field 20)
 * until every thread has: each task's own state says. -1 when /proc
 * cannot say. */
static int cgi_wd_alone(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    long me = syscall(SYS_gettid);
    int alone = 1;
    struct dirent *e;
    while (alone && (e = readdir(d))) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0 || tid == me) continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) close(fd);
        if (n <= 0) continue; /* gone meanwhile */
        buf[n] = '\0';
        const char *p = strrchr(buf, ')');
        alone = p && (p[2] == 'Z' || p[2] == 'X'); /* ") S ...": the state follows */
    }
    closedir(d);
    return alone;
}

static void cgi_wd_max(cg_counters *c, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(&c->max_ns, memory_order_relaxed);
    while (v > cur &&
           !atomic_compare_exchange_weak_explicit(&c->max_ns, &cur, v, memory_order_relaxed, memory_order_relaxed)) {}
}

/* Has slot i's hung call returned (its slot left, or another call since)?
 * Then it is added to cgi_wd_lates[*n] with how long it was in flight, up
 * to now: nothing per call pays for it, and a tick is at most a
 * millisecond after the call left while calls are made. */
static void cgi_wd_left(unsigned i, int32_t tid, int in_flight, uint64_t seq, uint64_t now, unsigned *n)
{
    struct cgi_wd_seen *w = &cgi_wd_seen[i];
    if (!w->hung || (in_flight && seq == w->seq && tid == w->tid)) return;
    w->hung = 0;
    uint64_t ns = now > w->entered ? cgi_ticks_ns(now - w->entered) : 0;
    cgi_wd_lates[(*n)++] = (cgi_wd_late){.slot = i, .tid = w->tid, .seq = w->seq, .ns = ns, .c = w->site};
}

/* One tick: `len` ticks since the previous one. Returns 1 when a call was
 * in flight or made since. */
static int cgi_wd_tick(uint64_t now, uint64_t len)
{
    int sampling = atomic_load_explicit(&cgi_cfg.timing, memory_order_relaxed) == CGI_TIMING_SAMPLED &&
                   !atomic_load_explicit(&cgi_cfg.trace_on, memory_order_relaxed);
    int marks = sampling && atomic_load_explicit(&cgi_cfg.adapter, memory_order_relaxed);
    /* The report says how its times were taken (the timeline's calls read the clock). */
    uint32_t timing = sampling ? CGI_TIMING_SAMPLED : CGI_TIMING_EXACT;
    if (atomic_load_explicit(&cgi_stats->h.timing, memory_order_relaxed) != timing)
        atomic_store_explicit(&cgi_stats->h.timing, timing, memory_order_relaxed);
    uint64_t stall = atomic_load_explicit(&cgi_cfg.stall_ns, memory_order_relaxed);
    uint64_t hang = atomic_load_explicit(&cgi_cfg.record_ns, memory_order_relaxed);
    uint64_t len_ns = cgi_ticks_ns(len), sig = 0;
    unsigned used = atomic_load(&cgi_slots_used), ncalls = 0, nlate = 0;
    int busy = 0, hung = 0;
    if (used > CGI_STATS_MAX_SLOTS) used = CGI_STATS_MAX_SLOTS;
    for (unsigned i = 0; i < used; i++) {
        cgi_slot *slot = &cgi_stats->slot[i];
        struct cgi_wd_seen *w = &cgi_wd_seen[i];
        cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_acquire);
        uint64_t seq = atomic_load_explicit(&slot->seq, memory_order_relaxed);
        if (seq != w->seq) busy = 1;
        int32_t tid = atomic_load_explicit(&slot->tid, memory_order_relaxed);
        int in_flight = tid > 0 && c && c != &cgi_no_counters;
        cgi_wd_left(i, tid, in_flight, seq, now, &nlate);
        if (!in_flight) {
            w->seq = seq, w->inflight = 0;
            continue;
        }
        busy = 1;
        int timed = !sampling || atomic_load_explicit(&slot->timed, memory_order_relaxed);
        if (seq != w->seq || !w->inflight) {
            /* A call not seen before: it entered since the last tick. */
            w->seq = seq, w->inflight = 1, w->first = now;
            if (!timed) atomic_store_explicit(&slot->entered, now, memory_order_relaxed);
        }
        uint64_t entered = timed ? atomic_load_explicit(&slot->entered, memory_order_relaxed) : w->first;
        uint64_t age = now > entered ? cgi_ticks_ns(now - entered) : 0;
        w->entered = entered;
        if (!timed) {
            atomic_fetch_add_explicit(&c->total_ns, len_ns, memory_order_relaxed);
            if (age > atomic_load_explicit(&c->max_ns, memory_order_relaxed)) cgi_wd_max(c, age);
            if (marks && age >= stall && w->marked != seq) {
                w->marked = seq;
                atomic_store_explicit(&slot->mark, seq, memory_order_release);
            }
        }
        cgi_wd_calls[ncalls++] = (cgi_wd_call){.slot = i, .seq = seq, .age_ns = age};
        if (hang && age >= hang) {
            hung = 1;
            w->hung = 1, w->tid = tid, w->site = c;
            uint64_t h = (seq * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)i << 1 | atomic_load(&slot->waiting));
            sig = (sig ^ h) * 0xff51afd7ed558ccdull + 1;
        }
    }
    /* Before the page is written again: it still has the calls that left. */
    if (nlate) cgi_hang_late(cgi_wd_lates, nlate, cgi_ticks_ns(now - cgi_clk.tick0));
    if (hang) {
        uint64_t now_ns = cgi_ticks_ns(now - cgi_clk.tick0);
        atomic_store_explicit(&cgi_stats->hang.seen_ns, now_ns, memory_order_relaxed);
        if (hung && sig != cgi_wd_sig) {
            cgi_wd_sig = sig;
            cgi_hang_report(cgi_wd_calls, ncalls, now_ns);
        } else if (!hung && cgi_wd_sig) {
            cgi_wd_sig = 0;
            cgi_hang_over(now_ns);
        }
    }
    return busy;
}

static void *cgi_wd_main(void *arg)
{
    (void)arg;
    int starting = 1;
    atomic_compare_exchange_strong(&cgi_wd_state, &starting, 3);
    uint64_t last = cgi_ticks();
    unsigned idle = 0;
    for (;;) {
        uint64_t ns = idle >= CGI_WD_IDLE_TICKS ? CGI_WD_SLOW_NS : CGI_WD_TICK_NS;
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)ns};
        while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {}
        /* The exit's look for late calls is running: the next tick counts this one's time. */
        if (atomic_exchange_explicit(&cgi_wd_busy, 1, memory_order_acquire)) continue;
        uint64_t now = cgi_ticks();
        int busy = cgi_wd_tick(now, now - last);
        atomic_store_explicit(&cgi_wd_busy, 0, memory_order_release);
        last = now;
        /* A reader asked for every Python thread's stack: one word a tick. */
        uint32_t ask = atomic_load_explicit(&cgi_stats->h.threads.ask, memory_order_acquire);
        if (__builtin_expect(ask != cgi_wd_threads_done, 0)) {
            cgi_wd_threads_done = ask;
            cgi_pystacks_answer(ask);
        }
        if (busy) {
            idle = 0;
        } else if (++idle >= CGI_WD_IDLE_TICKS && idle % CGI_WD_ALONE_EVERY == 0) {
            int alone = cgi_wd_alone();
            if (alone > 0) {
                /* The program's threads are gone and its main thread ended
                 * with pthread_exit: the process ends with this thread. */
                return NULL;
            }
            if (alone < 0 && cgi_wd_alone_by_slots()) {
                /* As far as can be known without /proc: a thread that made
                 * no counted call yet may live on, and its first one starts
                 * a watchdog again. */
                atomic_store(&cgi_wd_state, 0);
                return NULL;
            }
        }
    }
}

void cgi_watchdog_start(void)
{
    if (__builtin_expect(atomic_load_explicit(&cgi_wd_state, memory_order_relaxed) != 0, 1)) return;
    if (!cgi_stats || !atomic_load(&cgi_cfg.stats_on) || !cgi_clk.mult) return;
    if (atomic_load(&cgi_cfg.timing) == CGI_TIMING_EXACT && !atomic_load(&cgi_cfg.record_ns)) return;
#if defined(__SANITIZE_THREAD__)
    if (cgi_wd_forked) return; /* TSan kills a forked child that starts a thread (exit 66) */
#endif
    int none = 0;
    if (!atomic_compare_exchange_strong(&cgi_wd_state, &none, 1)) return;
    int saved = errno;
    cgi_hang_prepare();
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    /* Every signal blocked: the program's handlers never run on it. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    if (pthread_create(&t, &attr, cgi_wd_main, NULL) != 0)
        atomic_store(&cgi_wd_state, 2);
    else
        pthread_setname_np(t, "callguard-wd"); /* named once it exists: ps and tests see it at once */
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    errno = saved;
}

/* 1 while this process's exit holds the watchdog (cgi_watchdog_hold_at_exit): a report then needs no pause. */
static _Atomic int cgi_wd_exit_holds;

int cgi_watchdog_pause(void)
{
    if (atomic_load(&cgi_wd_state) != 3 || !cgi_stats || atomic_load(&cgi_wd_exit_holds)) return 0;
    for (int i = 0; atomic_exchange_explicit(&cgi_wd_busy, 1, memory_order_acquire); i++) {
        if (i == 100) return 0; /* a tick that takes this long (reading /proc): leave it */
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100000};
        nanosleep(&ts, NULL);
    }
    return 1;
}

int cgi_watchdog_hold_at_exit(void)
{
    if (!cgi_watchdog_pause()) return 0;
    atomic_store(&cgi_wd_exit_holds, 1);
    uint64_t now = cgi_ticks();
    unsigned used = atomic_load(&cgi_slots_used), nlate = 0;
    if (used > CGI_STATS_MAX_SLOTS) used = CGI_STATS_MAX_SLOTS;
    for (unsigned i = 0; i < used; i++) {
        cgi_slot *slot = &cgi_stats->slot[i];
        cg_counters *c = atomic_load_explicit(&slot->counters, memory_order_acquire);
        int32_t tid = atomic_load_explicit(&slot->tid, memory_order_relaxed);
        int in_flight = tid > 0 && c && c != &cgi_no_counters;
        cgi_wd_left(i, tid, in_flight, atomic_load_explicit(&slot->seq, memory_order_relaxed), now, &nlate);
    }
    if (nlate) cgi_hang_late(cgi_wd_lates, nlate, cgi_ticks_ns(now - cgi_clk.tick0));
    return 1;
}

void cgi_watchdog_release(int held)
{
    if (!held) return;
    atomic_store(&cgi_wd_exit_holds, 0);
    atomic_store_explicit(&cgi_wd_busy, 0, memory_order_release);
}

void cgi_watchdog_before_fork(void)
{
    /* A thread being started may hold a lock of the allocator in its own
     * set-up (pthread_getattr_np allocates), and an allocator without a fork
     * handler (GCC 12's AddressSanitizer) leaves it locked forever in the
     * child: its next allocation, or LeakSanitizer's check at exit, never
     * returns. So the fork waits until the watchdog's thread runs its own
     * code: only in the moment after a process's first counted call, and at
     * most 100 ms. */
    for (int i = 0; i < 2000 && atomic_load(&cgi_wd_state) == 1; i++) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 50000};
        nanosleep(&ts, NULL);
    }
}

void cgi_watchdog_after_fork_child(void)
{
    /* The forking thread is the child's main thread now. */
    cgi_watchdog_note_main();
    atomic_store(&cgi_wd_state, 0);
    cgi_wd_forked = 1;
    memset(cgi_wd_seen, 0, sizeof cgi_wd_seen);
    cgi_wd_sig = 0;
    atomic_store(&cgi_wd_busy, 0); /* a tick the parent's watchdog was in is not the child's */
    cgi_wd_threads_done = 0;
}
