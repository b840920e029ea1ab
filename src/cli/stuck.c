/* A job's processes in brief, for `callguard run --stuck` and `callguard
 * status --stuck | --watch`: which have a call in flight past AFTER, the
 * one to name first (the odd one out, as `callguard status` orders them),
 * a key that changes when what the stuck processes do changes, and the
 * view as `callguard status` writes it, made into a string. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef MFD_CLOEXEC /* glibc older than 2.27 */
#include <linux/memfd.h>
#endif

/* What a process does: its pid and its oldest call (0: none in flight). */
static unsigned long long stuck_sig(const cg_status_brief *b)
{
    if (!b->oldest_ns) return 0;
    unsigned long long h = 1469598103934665603ull;
    char id[400];
    int len = snprintf(id, sizeof id, "%d|%s|%s|%d|%s", b->pid, b->api, b->name, b->waiting, b->where);
    for (int k = 0; k < len && k < (int)sizeof id; k++)
        h = (h ^ (unsigned char)id[k]) * 1099511628211ull;
    return h ? h : 1;
}

/* Of the processes doing what b does, how many. */
static size_t stuck_alike(const stuck_look *l, const cg_status_brief *b)
{
    size_t same = 0;
    for (size_t j = 0; j < l->n; j++)
        same += l->v[j].oldest_ns && !strcmp(l->v[j].name, b->name) && !strcmp(l->v[j].where, b->where) &&
                l->v[j].waiting == b->waiting;
    return same;
}

int stuck_look_at(stuck_look *l, const status_files *f, uint64_t after_ns, int quiet)
{
    memset(l, 0, sizeof *l);
    l->after_ns = after_ns;
    l->v = calloc(f->n ? f->n : 1, sizeof *l->v);
    l->sig = calloc(f->n ? f->n : 1, sizeof *l->sig);
    if (!l->v || !l->sig) return stuck_look_free(l), -1;
    cg_status_briefs((const char *const *)f->v, f->n, l->v, &l->n, quiet);
    for (size_t i = 0; i < l->n; i++) {
        l->sig[i] = stuck_sig(&l->v[i]);
        if (l->v[i].oldest_ns >= after_ns && l->v[i].oldest_ns) l->nstuck++;
    }
    /* The one to name: the odd one out among those in a call (as `callguard
     * status` orders them: the fewest doing what it does), then the oldest. */
    l->lead = l->n;
    size_t lead_group = SIZE_MAX;
    for (size_t i = 0; i < l->n && l->nstuck; i++) {
        const cg_status_brief *b = &l->v[i];
        if (!b->oldest_ns) continue;
        size_t same = stuck_alike(l, b);
        if (same < lead_group || (same == lead_group && b->oldest_ns > l->v[l->lead].oldest_ns))
            lead_group = same, l->lead = i;
    }
    return 0;
}

int stuck_changed(const stuck_look *l, const stuck_said *said)
{
    /* A process newly stuck in a call it was not in when the view was said. */
    for (size_t i = 0; i < l->n; i++) {
        if (!l->sig[i] || l->v[i].oldest_ns < l->after_ns) continue;
        size_t k = 0;
        while (k < said->n && said->sig[k] != l->sig[i])
            k++;
        if (k == said->n) return 1;
    }
    /* One stuck then that is not now: it moved on, ended or went. */
    for (size_t k = 0; k < said->n; k++) {
        if (!said->stuck[k]) continue;
        size_t i = 0;
        while (i < l->n && !(l->sig[i] == said->sig[k] && l->v[i].oldest_ns >= l->after_ns))
            i++;
        if (i == l->n) return 1;
    }
    return 0;
}

int stuck_remember(const stuck_look *l, stuck_said *said)
{
    free(said->sig), free(said->stuck);
    said->n = 0;
    said->sig = calloc(l->n ? l->n : 1, sizeof *said->sig);
    said->stuck = calloc(l->n ? l->n : 1, 1);
    if (!said->sig || !said->stuck) return -1;
    for (size_t i = 0; i < l->n; i++)
        if (l->sig[i]) said->sig[said->n] = l->sig[i], said->stuck[said->n++] = l->v[i].oldest_ns >= l->after_ns;
    return 0;
}

void stuck_forget(stuck_said *said)
{
    free(said->sig), free(said->stuck);
    memset(said, 0, sizeof *said);
}

void stuck_look_free(stuck_look *l)
{
    free(l->v), free(l->sig);
    l->v = NULL, l->sig = NULL, l->n = 0;
}

void stuck_duration(uint64_t ms, char *out, size_t cap)
{
    if (ms % 3600000 == 0)
        snprintf(out, cap, "%lluh", (unsigned long long)(ms / 3600000));
    else if (ms % 60000 == 0)
        snprintf(out, cap, "%llum", (unsigned long long)(ms / 60000));
    else if (ms % 1000 == 0)
        snprintf(out, cap, "%llus", (unsigned long long)(ms / 1000));
    else
        snprintf(out, cap, "%llums", (unsigned long long)ms);
}

void stuck_headline(const stuck_look *l, char *out, size_t cap)
{
    if (l->lead >= l->n) {
        snprintf(out, cap, "no call in flight past %.1f s", (double)l->after_ns / 1e9);
        return;
    }
    const cg_status_brief *b = &l->v[l->lead];
    char who[128];
    if (b->rank >= 0)
        snprintf(who, sizeof who, "rank %d (pid %d on %s)", b->rank, b->pid, b->host);
    else
        snprintf(who, sizeof who, "pid %d on %s", b->pid, b->host);
    snprintf(out, cap, "%s %s %s%s%s for %.1f s", who, b->waiting ? "waiting for the lock of" : "in", b->name,
             b->where[0] ? " at " : "", b->where, (double)b->oldest_ns / 1e9);
}

/* A string as JSON, with the escapes JSON needs (the runtime's names and
 * Python paths: UTF-8 passes as it is). */
void stuck_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

void stuck_json_list(FILE *out, const stuck_look *l)
{
    fputc('[', out);
    size_t k = 0;
    for (size_t i = 0; i < l->n; i++) {
        const cg_status_brief *b = &l->v[i];
        if (!b->oldest_ns) continue;
        fprintf(out, "%s{\"pid\": %d, \"stuck\": %s, \"rank\": ", k++ ? ", " : "", b->pid,
                b->oldest_ns >= l->after_ns ? "true" : "false");
        b->rank >= 0 ? fprintf(out, "%d", b->rank) : fputs("null", out);
        fputs(", \"host\": ", out);
        stuck_json_str(out, b->host);
        fputs(", \"api\": ", out);
        stuck_json_str(out, b->api);
        fputs(", \"name\": ", out);
        stuck_json_str(out, b->name);
        fprintf(out, ", \"waiting\": %s, \"age_ns\": %llu, \"where\": ", b->waiting ? "true" : "false", b->oldest_ns);
        b->where[0] ? stuck_json_str(out, b->where) : (void)fputs("null", out);
        fputc('}', out);
    }
    fputc(']', out);
}

char *stuck_view(const status_files *f, const char *where, cg_report_format format)
{
    int fd = (int)syscall(SYS_memfd_create, "callguard-view", MFD_CLOEXEC); /* memfd_create() is glibc 2.27's */
    if (fd < 0) return NULL;
    char *text = NULL;
    off_t len;
    if (cg_status_write_threads((const char *const *)f->v, f->n, where, fd, format, 0) == CG_OK &&
        (len = lseek(fd, 0, SEEK_END)) > 0 && (text = malloc((size_t)len + 1))) {
        ssize_t got = pread(fd, text, (size_t)len, 0);
        if (got != len) {
            free(text);
            text = NULL;
        } else {
            text[len] = '\0';
        }
    }
    close(fd);
    return text;
}
