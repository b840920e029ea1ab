/* Numbers and text as the timeline's JSON writes them: in place through a
 * char pointer, two digits at a time, the leading digits of a time stamp
 * formatted once. Included by trace_write.c and trace_args.c (their loops inline
 * them). */
#ifndef CGI_TRACE_DIGITS_H
#define CGI_TRACE_DIGITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const char cgi_tj_digits[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* The event loop writes through a local pointer: stores of chars through
 * j->b could alias j->n, and the compiler would reload both after each. */
static inline char *cgi_o_lit_(char *o, const char *s, size_t k)
{
    memcpy(o, s, k);
    return o + k;
}
#define cgi_o_lit(o, s) cgi_o_lit_((o), (s), sizeof(s) - 1)

/* k bytes of s, copied 16 at a time: both sides have room for the
 * overshoot (the buffer keeps CGI_TJ_EVENT_MAX free; the site's and the
 * thread's texts are allocated larger than what they hold). */
static inline char *cgi_o_text(char *o, const char *s, size_t k)
{
    for (size_t i = 0; i < k; i += 16)
        memcpy(o + i, s + i, 16);
    return o + k;
}

/* Decimal digits of v (1 for 0). */
static inline int cgi_ndigits(uint64_t v)
{
    static const uint64_t p10[20] = {1ull,
                                     10ull,
                                     100ull,
                                     1000ull,
                                     10000ull,
                                     100000ull,
                                     1000000ull,
                                     10000000ull,
                                     100000000ull,
                                     1000000000ull,
                                     10000000000ull,
                                     100000000000ull,
                                     1000000000000ull,
                                     10000000000000ull,
                                     100000000000000ull,
                                     1000000000000000ull,
                                     10000000000000000ull,
                                     100000000000000000ull,
                                     1000000000000000000ull,
                                     10000000000000000000ull};
    int t = (64 - __builtin_clzll(v | 1)) * 1233 >> 12; /* log10 from log2, low by at most one */
    t += t < 19 && v >= p10[t + 1];
    return t + 1 - (t > 0 && v < p10[t]);
}

/* Written in place from the last digit back, two at a time: digits built
 * in a scratch array and copied as words stalled on store forwarding. */
static inline char *cgi_o_u(char *o, uint64_t v)
{
    int n = cgi_ndigits(v);
    char *p = o + n;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, cgi_tj_digits + 2 * d, 2);
    }
    if (v >= 10)
        memcpy(p - 2, cgi_tj_digits + 2 * v, 2);
    else
        p[-1] = (char)('0' + v);
    return o + n;
}

/* Nanoseconds as microseconds with three decimals. One clock
 * (CLOCK_MONOTONIC) for every process of the host, so their events line up. */
static inline char *cgi_o_us(char *o, uint64_t ns)
{
    o = cgi_o_u(o, ns / 1000);
    unsigned f = (unsigned)(ns % 1000);
    o[0] = '.';
    o[1] = (char)('0' + f / 100);
    memcpy(o + 2, cgi_tj_digits + 2 * (f % 100), 2);
    return o + 4;
}

/* An event's `ts`: nanoseconds as microseconds with three decimals, like
 * cgi_o_us. A time line's stamps share their leading digits (seconds and
 * above), so those are formatted once and copied while they stay the same:
 * the digit loop over 11 digits was a quarter of the writer's instructions. */
typedef struct cgi_ts_cache {
    uint64_t hi; /* ts in us / 1e6 that txt holds; 0: none */
    size_t n;
    char txt[32]; /* its digits, and room to copy 16 at a time */
} cgi_ts_cache;

static inline char *cgi_o_ts(char *o, uint64_t ns, cgi_ts_cache *c)
{
    uint64_t us = ns / 1000, hi = us / 1000000;
    if (hi == 0) return cgi_o_us(o, ns);
    if (hi != c->hi) {
        c->hi = hi;
        c->n = (size_t)(cgi_o_u(c->txt, hi) - c->txt);
    }
    memcpy(o, c->txt, 16); /* at most 14 digits below 2^64 ns */
    o += c->n;
    unsigned lo = (unsigned)(us % 1000000), f = (unsigned)(ns % 1000);
    memcpy(o, cgi_tj_digits + 2 * (lo / 10000), 2);
    memcpy(o + 2, cgi_tj_digits + 2 * (lo / 100 % 100), 2);
    memcpy(o + 4, cgi_tj_digits + 2 * (lo % 100), 2);
    o[6] = '.';
    o[7] = (char)('0' + f / 100);
    memcpy(o + 8, cgi_tj_digits + 2 * (f % 100), 2);
    return o + 10;
}

#endif
