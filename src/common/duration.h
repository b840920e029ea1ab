/* A duration as people write it (30s, 5m, 1500ms, 1h): `--stuck AFTER`,
 * read by the runtime (CALLGUARD_STUCK) and by the CLI. Self-contained,
 * like names.h. */
#ifndef CGI_DURATION_H
#define CGI_DURATION_H

#include <stdint.h>
#include <string.h>

/* The bounds of `--stuck AFTER`: a second (the hang page that names a
 * call's line is written at 1 s) to a day. */
#define CGI_STUCK_MIN_MS 1000u
#define CGI_STUCK_MAX_MS 86400000u
#define CGI_STUCK_EXPECTED "a duration from 1s to 24h with its unit (1500ms, 30s, 5m, 1h), or off"

/* N followed by ms, s, m or h (no sign, no blank, no fraction) into *ms,
 * within [min_ms, max_ms]; 0 when it is not one. */
static inline int cgi_parse_duration(const char *v, uint64_t min_ms, uint64_t max_ms, uint64_t *ms)
{
    uint64_t n = 0;
    const char *p = v;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (n > max_ms) return 0;
        n = n * 10 + (uint64_t)(*p - '0');
    }
    if (p == v) return 0;
    uint64_t unit = !strcmp(p, "ms")  ? 1
                    : !strcmp(p, "s") ? 1000
                    : !strcmp(p, "m") ? 60000
                    : !strcmp(p, "h") ? 3600000
                                      : 0;
    if (!unit || n > max_ms || n * unit < min_ms || n * unit > max_ms) return 0;
    *ms = n * unit;
    return 1;
}

#endif
