/* The clock of guarded calls (clock.c): ticks, and their conversion to ns.
 *
 * On x86-64 with an invariant TSC (CPUID 0x80000007, EDX bit 8) a tick is
 * one TSC count: rdtsc costs a few ns where clock_gettime costs 20-30 ns on
 * a VM. The TSC is calibrated once against CLOCK_MONOTONIC, over the time
 * between start-up and the first timed call (at least 1 ms). Anywhere else
 * a tick is a CLOCK_MONOTONIC nanosecond. */
#ifndef CGI_CLOCK_H
#define CGI_CLOCK_H

#include "internal.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

typedef struct cgi_clock {
    int tsc;        /* 1: ticks are TSC counts */
    uint64_t tick0; /* ticks at start-up */
    uint64_t mono0; /* CLOCK_MONOTONIC ns at start-up */
    uint64_t mult;  /* ns = ticks * mult >> 32; 0 until calibrated */
} cgi_clock;

CGI_HIDDEN extern cgi_clock cgi_clk;

/* Start-up: decides the kind of tick and takes the first sample. */
CGI_HIDDEN void cgi_clock_init(void);
/* Sets mult, once; waits until 1 ms has passed since start-up if needed.
 * Called before the first timed call of the process. */
CGI_HIDDEN void cgi_clock_calibrate(void);

static inline uint64_t cgi_ticks(void)
{
#if defined(__x86_64__)
    if (__builtin_expect(cgi_clk.tsc, 1)) return __rdtsc();
#endif
    return cgi_now_ns();
}

/* A tick where a TSC is known to be there (cgi_clk.tsc). */
static inline uint64_t cgi_tsc(void)
{
#if defined(__x86_64__)
    return __rdtsc();
#else
    return cgi_now_ns();
#endif
}

static inline uint64_t cgi_ticks_ns(uint64_t ticks)
{
    return (uint64_t)(((unsigned __int128)ticks * cgi_clk.mult) >> 32);
}

#endif
