/* Well-formed UTF-8, for the JSON callguard writes (reports, timelines).
 *
 * JSON is UTF-8 (RFC 8259), and a strict reader (Python's json, Perfetto)
 * refuses a file with one bad byte. Names come from outside as bytes: a
 * command line that is not UTF-8, a thread name the kernel cut at 15 bytes
 * inside a character. The writers copy a well-formed sequence as it is and
 * write each other byte as U+FFFD. */
#ifndef CGI_UTF8_H
#define CGI_UTF8_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at s (1 to 4 bytes, reading
 * at most max of them), or 0 when the byte at s starts none (RFC 3629: no
 * overlong form, no surrogate, nothing past U+10FFFF, none cut short). */
static inline size_t cgi_utf8_seq(const char *str, size_t max)
{
    const unsigned char *s = (const unsigned char *)str;
    if (!max) return 0;
    unsigned c = s[0];
    if (c < 0x80) return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;
    if (max < n || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return n;
}

/* What a byte that starts no well-formed sequence becomes in JSON. */
#define CGI_UTF8_REPLACEMENT "\\ufffd"

#endif
