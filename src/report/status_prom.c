/* `callguard status --format prometheus`: running processes in Prometheus'
 * text exposition format (version 0.0.4), for a node exporter's textfile
 * collector or a scrape through a small server: calls by entry point, calls
 * in flight, the oldest call's age, and the collectives' ranks out of step.
 * Each metric family is gathered apart (a family's samples must be
 * together) and written after its HELP and TYPE lines. */
#define _GNU_SOURCE
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A label value: backslash, double quote and newline escaped. */
static void cgi_prom_value(FILE *out, const char *s, size_t max)
{
    for (size_t i = 0; i < max && s[i]; i++) {
        if (s[i] == '\\' || s[i] == '"')
            fputc('\\', out), fputc(s[i], out);
        else if (s[i] == '\n')
            fputs("\\n", out);
        else
            fputc(s[i], out);
    }
}

/* {pid="12",rank="2",host="vm" (left open: the caller adds or closes). */
static void cgi_prom_proc(FILE *out, const cgi_status_proc *p)
{
    fprintf(out, "{pid=\"%d\",rank=\"", p->pid);
    if (p->rank >= 0) fprintf(out, "%d", (int)p->rank);
    fputs("\",host=\"", out);
    cgi_prom_value(out, p->host, sizeof p->host);
    fputc('"', out);
}

struct cgi_prom {
    FILE *calls, *flight, *oldest;
    char *text[3];
    size_t len[3];
    size_t nproc;
};

cgi_prom *cgi_prom_begin(void)
{
    cgi_prom *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->calls = open_memstream(&m->text[0], &m->len[0]);
    m->flight = open_memstream(&m->text[1], &m->len[1]);
    m->oldest = open_memstream(&m->text[2], &m->len[2]);
    if (m->calls && m->flight && m->oldest) return m;
    if (m->calls) fclose(m->calls);
    if (m->flight) fclose(m->flight);
    if (m->oldest) fclose(m->oldest);
    free(m->text[0]), free(m->text[1]), free(m->text[2]), free(m);
    return NULL;
}

void cgi_prom_add(cgi_prom *m, const cgi_stats_region *r, const cgi_status_proc *p)
{
    m->nproc++;
    for (uint32_t k = 0; k < cgi_nrec(r); k++) {
        const cgi_stats_record *rec = &r->r[k];
        uint64_t calls = cgi_ctr_calls(&rec->c);
        if (!calls) continue;
        fputs("callguard_calls_total", m->calls);
        cgi_prom_proc(m->calls, p);
        fputs(",api=\"", m->calls);
        cgi_prom_value(m->calls, rec->api, sizeof rec->api);
        fputs("\",entry=\"", m->calls);
        cgi_prom_value(m->calls, rec->name, sizeof rec->name);
        fprintf(m->calls, "\"} %" PRIu64 "\n", calls);
    }
    fputs("callguard_calls_in_flight", m->flight);
    cgi_prom_proc(m->flight, p);
    fprintf(m->flight, "} %u\n", p->in_flight);
    const cgi_hang_call *old = NULL;
    for (unsigned i = 0; i < p->ncalls; i++)
        if (!old || p->call[i].age_ns > old->age_ns) old = &p->call[i];
    fputs("callguard_oldest_call_seconds", m->oldest);
    cgi_prom_proc(m->oldest, p);
    fputs(",api=\"", m->oldest);
    if (old) cgi_prom_value(m->oldest, old->api, sizeof old->api);
    fputs("\",entry=\"", m->oldest);
    if (old) cgi_prom_value(m->oldest, old->name, sizeof old->name);
    fprintf(m->oldest, "\"} %.3f\n", old ? (double)old->age_ns / 1e9 : 0.0);
}

/* One family: its HELP and TYPE lines, then its samples. */
static void cgi_prom_family(FILE *out, const char *name, const char *type, const char *help, const char *samples)
{
    fprintf(out, "# HELP %s %s\n# TYPE %s %s\n%s", name, help, name, type, samples ? samples : "");
}

int cgi_prom_end(cgi_prom *m, FILE *out, cgi_status_steps *steps)
{
    int rc = 0;
    if (fclose(m->calls) != 0 || fclose(m->flight) != 0 || fclose(m->oldest) != 0) rc = -1;
    if (!rc) {
        fprintf(out,
                "# HELP callguard_processes Guarded processes read.\n# TYPE callguard_processes gauge\n"
                "callguard_processes %zu\n",
                m->nproc);
        cgi_prom_family(out, "callguard_calls_total", "counter", "Guarded calls made, by entry point.", m->text[0]);
        cgi_prom_family(out, "callguard_calls_in_flight", "gauge", "Guarded calls in flight now.", m->text[1]);
        cgi_prom_family(out, "callguard_oldest_call_seconds", "gauge",
                        "Age of the oldest guarded call in flight (0: none), and its entry point.", m->text[2]);
        cgi_prom_family(out, "callguard_collective_ranks_out_of_step", "gauge",
                        "Ranks whose count of a collective differs from most ranks' now.", NULL);
        if (steps) rc = cgi_status_steps_write(out, steps, 2);
    }
    free(m->text[0]), free(m->text[1]), free(m->text[2]), free(m);
    return rc;
}
