/* Well-formed UTF-8, for the JSON callguard writes (reports, timelines).
 *
 * JSON is UTF-8 (RFC 8259), and a strict reader (Python's json, Perfetto)
 * refuses a file with one bad byte. Names come from outside as bytes: a
 * command line that is not UTF-8, a thread name the kernel cut at 15 bytes
 * inside a character. The writers copy a well-formed sequence as it is and
 * write each other byte as U+FFFD (cgi_json_escape, or their own). */
#ifndef CGI_UTF8_H
#define CGI_UTF8_H

#include <stddef.h>
#include <string.h>

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

/* A string's JSON escaping, without the quotes, into out (6 * max bytes at
 * most): the first max bytes of s at most, up to its NUL. */
static inline size_t cgi_json_escape(char *out, const char *s, size_t max)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    for (size_t i = 0; i < max && s[i]; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') {
            out[n++] = '\\';
            out[n++] = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {
            memcpy(out + n, "\\u00", 4);
            n += 4;
            out[n++] = hex[ch >> 4];
            out[n++] = hex[ch & 15];
        } else if (ch < 0x80) {
            out[n++] = (char)ch;
        } else {
            size_t k = cgi_utf8_seq(s + i, strnlen(s + i, max - i < 4 ? max - i : 4));
            if (k) {
                memcpy(out + n, s + i, k);
                n += k, i += k - 1;
            } else {
                memcpy(out + n, CGI_UTF8_REPLACEMENT, 6);
                n += 6;
            }
        }
    }
    return n;
}

#endif
