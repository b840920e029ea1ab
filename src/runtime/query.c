/* The C API that reads: statistics, reports of this process, the sites of
 * the loaded layers, result names. */
#define _GNU_SOURCE
#include "internal.h"

#include "domain.h"
#include "../common/errors.h"
#include "../report/report.h"
#include "../report/trace_read.h"
#include "resolve.h"
#include "site.h"
#include "stats.h"
#include "trace.h"
#include "watchdog.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

int cg_get_stats(const char *name, cg_site_stats *out)
{
    if (!name || !out) return cgi_fail(CG_EINVAL, "cg_get_stats: site and out must not be NULL");
    pthread_mutex_lock(&cgi_cfg_lock);
    cg_site *s = cgi_site_find(name);
    if (s) {
        cg_counters *c = s->ctr;
        out->calls = cgi_stats_calls(c);
        out->nested = atomic_load(&c->nested);
        out->errors = cgi_ctr_errors(c);
        out->total_ns = cgi_ctr_total_ns(c);
        out->max_ns = atomic_load(&c->max_ns);
        out->lock_wait_ns = atomic_load(&c->lock_wait_ns);
        out->stalls = atomic_load(&c->stalls);
        out->stall_ns = atomic_load(&c->stall_ns);
        out->states = cgi_ctr_states(c);
        out->peak_inside = atomic_load(&c->inside.peak);
        out->peak_waiting = atomic_load(&c->waiting.peak);
    }
    pthread_mutex_unlock(&cgi_cfg_lock);
    if (!s) return cgi_fail(CG_ENOENT, "unknown entry point '%s'", name);
    return CG_OK;
}

int cg_reset_stats(void)
{
    pthread_mutex_lock(&cgi_cfg_lock);
    uint32_t n = atomic_load(&cgi_stats->h.nrecords);
    for (uint32_t i = 0; i < n; i++)
        cgi_ctr_zero(&cgi_stats->r[i]);
    cgi_stats_end_runs();
    cgi_stats_reset_stalls();
    pthread_mutex_unlock(&cgi_cfg_lock);
    return CG_OK;
}

/* Copies n bytes (a multiple of 8) a word at a time, each read whole: other threads go on counting. */
static void cgi_copy_words(void *to, const void *from, size_t n)
{
    for (size_t i = 0; i < n / 8; i++)
        ((uint64_t *)to)[i] = __atomic_load_n((const uint64_t *)from + i, __ATOMIC_RELAXED);
}

/* The region as a file's reader sees it (cgi_stats_fold): a copy with the threads' runs in their records.
 * NULL when out of memory (the report then reads the region itself, without the runs). */
static cgi_stats_region *cgi_stats_copy(void)
{
    _Static_assert(sizeof(cgi_stats_header) % 8 == 0 && sizeof(cgi_stats_record) % 8 == 0 &&
                       offsetof(cgi_stats_region, stall) % 8 == 0 && sizeof(cgi_stats_region) % 8 == 0,
                   "the region copies by words");
    cgi_stats_region *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    int held = cgi_watchdog_pause();
    const size_t tail = offsetof(cgi_stats_region, stall);
    cgi_copy_words(&r->h, &cgi_stats->h, sizeof r->h);
    uint32_t n = atomic_load(&cgi_stats->h.nrecords);
    cgi_copy_words(r->r, cgi_stats->r, (n < CGI_STATS_MAX_RECORDS ? n : CGI_STATS_MAX_RECORDS) * sizeof r->r[0]);
    cgi_copy_words((char *)r + tail, (const char *)cgi_stats + tail, sizeof *r - tail);
    cgi_watchdog_release(held);
    cgi_stats_fold(r);
    return r;
}

int cg_report_write(const char *path, cg_report_format format)
{
    cgi_stats_region *copy = cgi_stats_copy();
    cgi_proc_view v = {.region = copy ? copy : cgi_stats};
    cgi_trace_view *tv = malloc(sizeof *tv);
    if (tv) {
        cgi_trace_self_view(tv);
        if (tv->h) {
            v.have_trace = 1;
            cgi_trace_count(tv, &v.trace_events, &v.trace_dropped);
        }
        free(tv);
    }
    int rc = cgi_report_to(path, &v, 1, 0, format);
    free(copy);
    return rc;
}

const cg_args *cgi_site_args_named(const char *api, const char *name, const char *(**result_name)(long))
{
    for (cg_layer *l = __atomic_load_n(&cgi_layers, __ATOMIC_ACQUIRE); l; l = l->next) {
        if (strcmp(l->api, api) != 0 || !l->defaults) continue;
        for (unsigned i = 0; i < l->nsites; i++)
            if (l->sites[i].name && strcmp(l->sites[i].name, name) == 0) {
                *result_name = l->result_name;
                return l->defaults[i].args;
            }
    }
    return NULL;
}

const char *cg_result_name(const char *api, long result)
{
    if (!api) return NULL;
    for (cg_layer *l = cgi_layers; l; l = l->next)
        if (strcmp(l->api, api) == 0 && l->result_name) return l->result_name(result);
    return NULL;
}

long cg_list_sites(const char *api, cg_site_info *out, size_t max)
{
    long n = 0;
    pthread_mutex_lock(&cgi_cfg_lock);
    for (cg_layer *l = cgi_layers; l; l = l->next) {
        if (api && strcmp(api, l->api) != 0) continue;
        for (unsigned i = 0; i < l->nsites; i++) {
            const cg_site *s = &l->sites[i];
            if ((size_t)n < max) {
                cg_site_info *o = &out[n];
                o->api = l->api;
                o->name = s->name;
                o->variant_of = s->base != i ? l->sites[s->base].name : NULL;
                o->transition = (cg_transition)atomic_load(&s->transition);
                o->blocking = (int)atomic_load(&s->blocking);
                o->reason = o->blocking ? s->reason : NULL;
                o->domain = cgi_domain_name(atomic_load(&s->domain));
                o->scope = (cg_scope)atomic_load(&s->scope);
                o->nrules = s->nrules;
                o->rules = s->rules;
            }
            n++;
        }
    }
    pthread_mutex_unlock(&cgi_cfg_lock);
    return n;
}

int cg_layer_search(const char *api)
{
    int search = -1;
    pthread_mutex_lock(&cgi_cfg_lock);
    for (cg_layer *l = cgi_layers; l && search < 0; l = l->next)
        if (api && strcmp(l->api, api) == 0) search = l->search;
    pthread_mutex_unlock(&cgi_cfg_lock);
    return search;
}

long cg_list_layers(cg_layer_info *out, size_t max)
{
    pthread_mutex_lock(&cgi_cfg_lock);
    long n = 0;
    for (cg_layer *l = cgi_layers; l; l = l->next)
        n++;
    long i = n;
    /* cgi_layers is newest first; the list is in registration order. */
    for (cg_layer *l = cgi_layers; l; l = l->next) {
        if ((size_t)--i >= max) continue;
        Dl_info info;
        cg_layer_info *o = &out[i];
        o->api = l->api;
        o->prefixes = l->prefixes;
        o->soname = l->soname;
        o->library_env = l->library_env;
        o->library_path = l->library_path;
        o->header = l->header;
        /* The loader's own copy of the name: layers are never unloaded (nodelete). */
        o->path = dladdr(l, &info) && info.dli_fname ? info.dli_fname : "";
        o->shim = cgi_layer_is_shim(l);
        o->nsites = l->nsites;
    }
    pthread_mutex_unlock(&cgi_cfg_lock);
    return n;
}
