/* The names of callguard's files: made and parsed (file_names.h). */
#define _GNU_SOURCE
#include "file_names.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each pattern, once: what comes before and after its parts. */
static const struct cgi_file_pattern {
    const char *prefix, *suffix;
    int job;     /* 1: HOST[-rankR]-pidP[-K]; 2: HOST; 0: PID-STAMP */
    int rank_ok; /* a job's: may have the rank and K parts */
} cgi_file_patterns[] = {
    [CGI_FILE_STATS] = {"cg-", ".stats", 0, 0},               /* cg-PID-STAMP.stats */
    [CGI_FILE_RINGS] = {"cg-", ".trace", 0, 0},               /* cg-PID-STAMP.trace */
    [CGI_FILE_REPORT] = {"callguard-", ".json", 1, 1},        /* callguard-HOST[-rankR]-pidP[-K].json */
    [CGI_FILE_TRACE] = {"trace-", ".json", 1, 1},             /* trace-HOST[-rankR]-pidP[-K].json */
    [CGI_FILE_LIVE] = {".callguard-", ".live", 1, 0},         /* .callguard-HOST-pidP.live */
    [CGI_FILE_LEASE] = {".callguard-", "-stuck.lease", 2, 0}, /* .callguard-HOST-stuck.lease */
    [CGI_FILE_NOTE] = {".callguard-", "-stuck.note", 2, 0},   /* .callguard-HOST-stuck.note */
};

static int cgi_is_digit(char c) { return c >= '0' && c <= '9'; }

/* Does s[0..n) end in "-rank" and a digit or more? Where that '-' is: *at. */
static int cgi_ends_in_rank(const char *s, size_t n, size_t *at)
{
    size_t d = n;
    while (d > 0 && cgi_is_digit(s[d - 1]))
        d--;
    if (d == n || d < 5 || memcmp(s + d - 5, "-rank", 5) != 0) return 0;
    *at = d - 5;
    return 1;
}

void cgi_host_part(char out[CGI_HOST_PART_MAX], const char *host)
{
    snprintf(out, CGI_HOST_PART_MAX, "%s", host && *host ? host : "unknown-host");
    for (char *c = out; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_", *c)) *c = '_';
    size_t at;
    if (cgi_ends_in_rank(out, strlen(out), &at)) out[at] = '_';
}

int cgi_proc_file_name(char *buf, size_t cap, const char *dir, cgi_file_kind kind, pid_t pid, uint64_t stamp)
{
    const struct cgi_file_pattern *p = &cgi_file_patterns[kind];
    return snprintf(buf, cap, "%s/%s%d-%" PRIu64 "%s", dir, p->prefix, (int)pid, stamp, p->suffix);
}

char *cgi_job_file_name(const char *dir, cgi_file_kind kind, const char *host, int rank, pid_t pid, unsigned k)
{
    const struct cgi_file_pattern *p = &cgi_file_patterns[kind];
    char h[CGI_HOST_PART_MAX], rpart[24] = "", kpart[16] = "", *path;
    cgi_host_part(h, host);
    if (rank >= 0) snprintf(rpart, sizeof rpart, "-rank%d", rank);
    if (k > 1) snprintf(kpart, sizeof kpart, "-%u", k);
    size_t n = strlen(dir);
    const char *sep = !n || dir[n - 1] == '/' ? "" : "/";
    if (p->job == 2) return asprintf(&path, "%s%s%s%s%s", dir, sep, p->prefix, h, p->suffix) < 0 ? NULL : path;
    if (asprintf(&path, "%s%s%s%s%s-pid%d%s%s", dir, sep, p->prefix, h, rpart, (int)pid, kpart, p->suffix) < 0)
        return NULL;
    return path;
}

/* s[0..n) as a number no greater than max: digits only, at least one, no
 * leading zero (no name is made with one) unless `zeros`. */
static int cgi_number(const char *s, size_t n, uint64_t max, int zeros, uint64_t *v)
{
    if (n == 0 || (!zeros && n > 1 && s[0] == '0')) return 0;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!cgi_is_digit(s[i])) return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (*v > (max - d) / 10) return 0;
        *v = *v * 10 + d;
    }
    return 1;
}

/* PID-STAMP. */
static int cgi_parse_proc(const char *s, size_t n, cgi_file_name *out)
{
    const char *dash = memchr(s, '-', n);
    uint64_t pid;
    if (!dash || !cgi_number(s, (size_t)(dash - s), INT_MAX, 0, &pid) || pid == 0) return 0;
    out->pid = (pid_t)pid;
    return cgi_number(dash + 1, n - (size_t)(dash + 1 - s), UINT64_MAX, 1, &out->stamp);
}

/* -pidP[-K] at s[i..n). */
static int cgi_parse_pid_part(const char *s, size_t i, size_t n, int k_ok, cgi_file_name *out)
{
    if (n - i < 5 || memcmp(s + i, "-pid", 4) != 0) return 0;
    const char *d = s + i + 4, *end = s + n, *dash = memchr(d, '-', (size_t)(end - d));
    uint64_t pid, k = 1;
    if (dash && (!k_ok || !cgi_number(dash + 1, (size_t)(end - dash - 1), UINT_MAX, 0, &k) || k < 2)) return 0;
    if (!cgi_number(d, (size_t)((dash ? dash : end) - d), INT_MAX, 0, &pid) || pid == 0) return 0;
    out->pid = (pid_t)pid, out->k = (unsigned)k;
    return 1;
}

static int cgi_parse_host(const char *s, size_t hlen, cgi_file_name *out);

/* HOST[-rankR]-pidP[-K]: the pid part is the last "-pid" that parses (no
 * "-pid" can follow it); then a rank part at the end of what is left
 * (HOST never ends in one); HOST is what cgi_host_part makes. */
static int cgi_parse_job(const char *s, size_t n, int rank_ok, cgi_file_name *out)
{
    size_t i = n;
    while (i > 0 && !cgi_parse_pid_part(s, i - 1, n, rank_ok, out))
        i--;
    if (i == 0) return 0;
    size_t hlen = i - 1, at;
    out->rank = -1;
    if (rank_ok && cgi_ends_in_rank(s, hlen, &at)) {
        uint64_t rank;
        if (!cgi_number(s + at + 5, hlen - at - 5, INT_MAX, 0, &rank)) return 0;
        out->rank = (int)rank, hlen = at;
    }
    return cgi_parse_host(s, hlen, out);
}

/* HOST, as cgi_host_part makes it. */
static int cgi_parse_host(const char *s, size_t hlen, cgi_file_name *out)
{
    if (hlen == 0 || hlen >= CGI_HOST_PART_MAX) return 0;
    memcpy(out->host, s, hlen);
    out->host[hlen] = '\0';
    char again[CGI_HOST_PART_MAX];
    cgi_host_part(again, out->host);
    return strcmp(again, out->host) == 0;
}

int cgi_file_name_parse(const char *name, cgi_file_kind kind, cgi_file_name *out)
{
    const struct cgi_file_pattern *p = &cgi_file_patterns[kind];
    size_t len = strlen(name), pl = strlen(p->prefix), sl = strlen(p->suffix);
    if (len < pl + sl || strncmp(name, p->prefix, pl) != 0 || strcmp(name + len - sl, p->suffix) != 0) return 0;
    memset(out, 0, sizeof *out);
    out->rank = -1, out->k = 1;
    if (p->job == 2) return cgi_parse_host(name + pl, len - pl - sl, out);
    return p->job ? cgi_parse_job(name + pl, len - pl - sl, p->rank_ok, out)
                  : cgi_parse_proc(name + pl, len - pl - sl, out);
}
