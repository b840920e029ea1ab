/* Collectives out of step in a job that runs (`callguard status`): each ranked process's counts of the entry
 * points its layer marks collective, compared across the ranks as a report's view across ranks compares them
 * (report_ranks.c: the count most ranks made, the ranks that made another; a row of one communicator, "NAME@ID",
 * among the ranks that have it). A picture of the moment: a rank between two collectives is one behind for a
 * moment; one that stays behind while the others wait is the one to look at. */
#define _GNU_SOURCE
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct cgi_status_steps {
    cgi_ranks *v;
    char **names; /* a row's "api\0name", by row */
    size_t nrow, rowcap;
    char **hosts; /* each ranked process's host, kept as long as v */
    size_t nhost, hostcap;
};

cgi_status_steps *cgi_status_steps_new(void)
{
    cgi_status_steps *s = calloc(1, sizeof *s);
    if (s && !(s->v = cgi_ranks_new())) free(s), s = NULL;
    return s;
}

void cgi_status_steps_free(cgi_status_steps *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->nrow; i++)
        free(s->names[i]);
    for (size_t i = 0; i < s->nhost; i++)
        free(s->hosts[i]);
    cgi_ranks_free(s->v), free(s->names), free(s->hosts), free(s);
}

/* Room for one more in *p; 0: out of memory. */
static int cgi_steps_room(char ***p, size_t *cap, size_t n)
{
    if (n < *cap) return 1;
    size_t ncap = *cap ? *cap * 2 : 16;
    char **nv = realloc(*p, ncap * sizeof *nv);
    if (!nv) return 0;
    *p = nv, *cap = ncap;
    return 1;
}

/* The row of a record (made when new); SIZE_MAX: out of memory. */
static size_t cgi_steps_row(cgi_status_steps *s, const cgi_stats_record *rec)
{
    size_t la = strnlen(rec->api, sizeof rec->api), ln = strnlen(rec->name, sizeof rec->name);
    for (size_t i = 0; i < s->nrow; i++)
        if (strncmp(s->names[i], rec->api, la) == 0 && !s->names[i][la] &&
            strncmp(s->names[i] + la + 1, rec->name, ln) == 0 && !s->names[i][la + 1 + ln])
            return i;
    char *n = malloc(la + ln + 2);
    if (!n || !cgi_steps_room(&s->names, &s->rowcap, s->nrow)) return free(n), SIZE_MAX;
    memcpy(n, rec->api, la), n[la] = 0, memcpy(n + la + 1, rec->name, ln), n[la + 1 + ln] = 0;
    s->names[s->nrow] = n;
    return s->nrow++;
}

int cgi_status_steps_add(cgi_status_steps *s, const cgi_stats_region *r)
{
    if (!(r->h.rank_set & CGI_RANK_SET)) return 0;
    char *host = strndup(r->h.host, sizeof r->h.host);
    if (!host || !cgi_steps_room(&s->hosts, &s->hostcap, s->nhost)) return free(host), -1;
    s->hosts[s->nhost++] = host;
    uint32_t ix = cgi_ranks_process(s->v, &r->h, host);
    if (ix == CGI_RANKS_OOM) return -1;
    for (uint32_t k = 0; k < cgi_nrec(r); k++) {
        const cgi_stats_record *rec = &r->r[k];
        if (!rec->collective || cgi_ctr_calls(&rec->c) == 0) continue;
        size_t row = cgi_steps_row(s, rec);
        if (row == SIZE_MAX || cgi_ranks_site(s->v, ix, row, &rec->c) != 0 ||
            (memchr(rec->name, '@', sizeof rec->name) && cgi_ranks_members_only(s->v, row) != 0))
            return -1;
    }
    return 0;
}

typedef struct cgi_steps_out {
    const cgi_status_steps *s;
    FILE *out;
    int json, n;
} cgi_steps_out;

static void cgi_steps_site(const cgi_rank_site *site, void *arg)
{
    cgi_steps_out *o = arg;
    if (!site->nodd) return;
    const char *api = o->s->names[site->row], *name = api + strlen(api) + 1;
    uint32_t kept = site->nodd < CGI_RANKS_ODD_KEPT ? site->nodd : CGI_RANKS_ODD_KEPT;
    if (o->json == 2) { /* Prometheus: a sample of callguard_collective_ranks_out_of_step */
        fputs("callguard_collective_ranks_out_of_step{api=\"", o->out);
        cgi_text_str(o->out, api, CGI_API_NAME_MAX);
        fputs("\",entry=\"", o->out);
        cgi_text_str(o->out, name, CGI_NAME_MAX);
        fprintf(o->out, "\"} %u\n", site->nodd);
        return;
    }
    if (o->json) {
        fputs(o->n++ ? ",\n  {\"api\": " : "\n  {\"api\": ", o->out);
        cgi_json_str(o->out, api);
        cgi_json_field_str(o->out, "name", name);
        if (site->no_usual)
            fputs(", \"usual_calls\": null", o->out);
        else
            fprintf(o->out, ", \"usual_calls\": %" PRIu64, site->usual_calls);
        fprintf(o->out, ", \"ranks_out_of_step\": %u, \"out_of_step\": [", site->nodd);
        for (uint32_t k = 0; k < kept; k++) {
            fprintf(o->out, "%s{\"rank\": %u, \"calls\": %" PRIu64, k ? ", " : "", site->odd[k].rank,
                    site->odd_calls[k]);
            cgi_json_field_str(o->out, "host", site->odd[k].host);
            fputc('}', o->out);
        }
        fputs("]}", o->out);
        return;
    }
    if (!o->n++) fputs("  collectives out of step now (a rank behind the others, or ahead):\n", o->out);
    fputs("    ", o->out);
    cgi_text_str(o->out, name, CGI_NAME_MAX);
    fprintf(o->out, ": rank%s ", site->nodd > 1 ? "s" : "");
    for (uint32_t k = 0; k < kept; k++)
        fprintf(o->out, "%s%u", k ? ", " : "", site->odd[k].rank);
    fprintf(o->out, "%s made ", site->nodd > kept ? " and more" : "");
    for (uint32_t k = 0; k < kept; k++)
        fprintf(o->out, "%s%" PRIu64, k ? ", " : "", site->odd_calls[k]);
    if (site->no_usual)
        fputs(" calls, no count most ranks made\n", o->out);
    else
        fprintf(o->out, " calls, %s %" PRIu64 "\n", site->nodd > 1 ? "most ranks" : "the others", site->usual_calls);
}

int cgi_status_steps_write(FILE *out, cgi_status_steps *s, int json)
{
    if (cgi_ranks_finish(s->v) != 0) return -1;
    cgi_steps_out o = {s, out, json, 0};
    if (json == 1) fputs(",\n \"out_of_step\": [", out);
    cgi_ranks_each(s->v, cgi_steps_site, &o);
    if (json == 1) fputs("]", out);
    return 0;
}
