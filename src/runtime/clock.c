/* The clock of guarded calls. The calibration costs nothing in the common
 * case: the two samples are start-up and the first timed call, which are
 * usually far more than 1 ms apart; the error is then the width of two
 * bracketed readings over that interval (tens of ns over >= 1 ms: <= 0.01 %). */
#define _GNU_SOURCE
#include "clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

cgi_clock cgi_clk;
static pthread_once_t cgi_clock_once = PTHREAD_ONCE_INIT;

static int cgi_invariant_tsc(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return 0;
    __cpuid(0x80000007u, a, b, c, d);
    return (d >> 8) & 1;
#else
    return 0;
#endif
}

/* A (ticks, ns) pair read close together: the TSC is read on both sides of
 * clock_gettime and the tightest of a few tries is kept, so a thread
 * preempted between the two clocks (a loaded machine) cannot skew the
 * calibration. */
static void cgi_clock_pair(uint64_t *ticks, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = cgi_tsc(), m = cgi_now_ns(), b = cgi_tsc();
        if (b - a < best) best = b - a, *ticks = a + (b - a) / 2, *mono = m;
    }
}

void cgi_clock_init(void)
{
    cgi_clk.tsc = cgi_invariant_tsc();
    if (cgi_clk.tsc) {
        cgi_clock_pair(&cgi_clk.tick0, &cgi_clk.mono0);
    } else {
        cgi_clk.mono0 = cgi_clk.tick0 = cgi_now_ns();
        cgi_clk.mult = 1ull << 32;
    }
}

static void cgi_clock_calibrate_once(void)
{
    if (!cgi_clk.tsc) return;
    while (cgi_now_ns() - cgi_clk.mono0 < 1000000u) {}
    uint64_t mono = 0, ticks = 0;
    cgi_clock_pair(&ticks, &mono);
    uint64_t dt = ticks - cgi_clk.tick0, dm = mono - cgi_clk.mono0;
    /* A TSC that did not move, or runs below 10 MHz or above 100 GHz, is not
     * one to trust: fall back to clock_gettime. */
    if (dt < dm / 100 || dt > dm * 100) {
        cgi_clk.tsc = 0;
        cgi_clk.tick0 = mono;
        cgi_clk.mult = 1ull << 32;
        return;
    }
    cgi_clk.mult = (uint64_t)(((unsigned __int128)dm << 32) / dt);
}

void cgi_clock_calibrate(void) { pthread_once(&cgi_clock_once, cgi_clock_calibrate_once); }
