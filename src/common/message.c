/* Messages as one line that prints no terminal control, whatever the
 * values in them hold: a newline is shown as \n, a tab as \t, any other
 * control byte (C0, DEL, C1 as UTF-8) or a byte that is no well-formed
 * UTF-8 as \xNN. Values come from the environment, files and command
 * lines of other people (docs/security.md). The CLI compiles this file
 * in too: both print through the same rule. cgi_one_line calls nothing:
 * it is safe in a signal handler and in a child after fork. */
#define _GNU_SOURCE
#include "message.h"
#include "utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void cgi_one_line(char *dst, size_t cap, const char *src)
{
    if (!cap) return;
    size_t n = 0, left = strlen(src);
    while (left && n + 5 < cap) {
        unsigned char c = (unsigned char)*src;
        size_t k = cgi_utf8_seq(src, left);
        int c1 = k == 2 && c == 0xc2 && (unsigned char)src[1] < 0xa0; /* U+0080..U+009F */
        if (k > 1 && !c1) {
            /* A character beyond ASCII, as it is. */
            if (n + k + 5 >= cap) break;
            memcpy(dst + n, src, k);
        } else if (k == 1 && c >= 0x20 && c != 0x7f) {
            dst[n] = (char)c;
        } else if (c == '\n' || c == '\t') {
            dst[n++] = '\\';
            dst[n] = c == '\n' ? 'n' : 't';
            k = 1;
        } else {
            dst[n++] = '\\', dst[n++] = 'x', dst[n++] = "0123456789abcdef"[c >> 4];
            dst[n] = "0123456789abcdef"[c & 15];
            k = 1;
        }
        n += k, src += k, left -= k;
    }
    dst[n] = '\0';
}

void cgi_vsay(const char *fmt, va_list ap)
{
    char raw[1024], line[1200];
    vsnprintf(raw, sizeof raw, fmt, ap);
    cgi_one_line(line, sizeof line, raw);
    fprintf(stderr, "callguard: %s\n", line);
}

void cgi_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cgi_vsay(fmt, ap);
    va_end(ap);
}
