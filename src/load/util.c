/* The floor of libcallguard-load: what the core (load.c), the disk cache
 * (disk.c) and the back ends share: the counters of cg_load_get_stats,
 * growable strings, flag tests and a result's failure details. Calls
 * nothing of theirs. */
#define _GNU_SOURCE
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cg_load_stats lb_stats;

void lb_stat_add(uint64_t *counter) { __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED); }

LB_EXPORT void cg_load_get_stats(cg_load_stats *out)
{
    if (!out) return;
    uint64_t *dst = (uint64_t *)out, *src = (uint64_t *)&lb_stats;
    for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

/* ---- strings ---- */

static void str_reserve(lb_str *s, size_t more)
{
    if (s->oom || s->len + more + 1 <= s->cap) return;
    size_t cap = s->cap ? s->cap : 128;
    while (cap < s->len + more + 1)
        cap *= 2;
    char *p = realloc(s->p, cap);
    if (!p) {
        s->oom = 1;
        return;
    }
    s->p = p;
    s->cap = cap;
}

void lb_str_addn(lb_str *s, const void *data, size_t n)
{
    str_reserve(s, n);
    if (s->oom) return;
    memcpy(s->p + s->len, data, n);
    s->len += n;
    s->p[s->len] = '\0';
}

void lb_str_add(lb_str *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        lb_str_addn(s, small, (size_t)n);
        return;
    }
    str_reserve(s, (size_t)n);
    if (s->oom) return;
    va_start(ap, fmt);
    vsnprintf(s->p + s->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    s->len += (size_t)n;
}

char *lb_str_take(lb_str *s)
{
    char *p = s->oom ? NULL : s->p;
    if (s->oom) free(s->p);
    if (!s->oom && !p) p = strdup("");
    s->p = NULL;
    s->len = s->cap = 0;
    s->oom = 0;
    return p;
}

int lb_has_flag(const char *flags, const char *option)
{
    size_t n = strlen(option);
    for (const char *p = flags; p && (p = strstr(p, option)) != NULL; p += n) {
        int start = p == flags || p[-1] == ' ' || p[-1] == '\t';
        int end = p[n] == '\0' || p[n] == ' ' || p[n] == '\t';
        if (start && end) return 1;
    }
    return 0;
}

int lb_fail(cg_load_result *res, int status, const char *call, long api_result, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char *m = strdup(buf);
    if (m) {
        free(res->message);
        res->message = m;
    }
    res->failed_call = call;
    res->api_result = api_result;
    if (status == CG_LOAD_ERESOURCES) res->out_of_resources = 1;
    return status;
}

void lb_keep_log(cg_load_result *res, char *log)
{
    free(res->build_log);
    res->build_log = log;
}
