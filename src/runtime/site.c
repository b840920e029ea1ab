/* Layers, sites and their policy slots. Writers hold cgi_cfg_lock; the
 * guarded-call path reads the slots with plain atomic loads. A site's
 * `direct` pointer is the one thing the fast path reads: it is the real
 * function exactly when the site has nothing to do. */
#define _GNU_SOURCE
#include "site.h"

#include "clock.h"
#include "../common/errors.h"
#include "python.h"
#include "stats.h"
#include "threads.h"

#include <string.h>
#include <strings.h>

cg_layer *cgi_layers;
_Atomic int cgi_trace_args_on = 1;

/* The shortest path of cg_call the configuration allows (site.h). */
static int cgi_path_compute(void)
{
    const cg_adapter *ad = atomic_load(&cgi_cfg.adapter);
    int active = ad && atomic_load(&cgi_cfg.adapter_mode) == CG_ADAPTER_ACTIVE;
    int path = CGI_PATH_GUARDED;
    if (!atomic_load(&cgi_cfg.stats_on)) {
        if (active && ad == &cgi_cpython_adapter) path = CGI_PATH_PY;
    } else if (cgi_clk.tsc) {
        if (atomic_load(&cgi_cfg.trace_on))
            path = active ? CGI_PATH_GUARDED : CGI_PATH_TRACED;
        else if (!ad)
            path = CGI_PATH_COUNTED;
        else if (!active)
            path = CGI_PATH_DETECT;
        else if (ad == &cgi_cpython_adapter)
            path = CGI_PATH_COUNTED_PY;
    }
    return path;
}

/* Do the site's traced calls record their arguments (trace.h)? */
static int cgi_site_traces_args(const cg_site *s) { return atomic_load(&cgi_trace_args_on) && s->args; }

/* Does the site's policy say its calls leave the runtime? */
static int cgi_site_wants_leave(const cg_site *s)
{
    uint32_t t = atomic_load(&s->transition);
    return t == CG_TRANSITION_ALWAYS || (t == CG_TRANSITION_BLOCKING && atomic_load(&s->blocking));
}

uint32_t cgi_mode_lean(void)
{
    int st = atomic_load_explicit(&cgi_py.state, memory_order_acquire);
    return st == CGI_PY_PER_THREAD ? CGI_MODE_LEAN_PT : st == CGI_PY_SHARED ? CGI_MODE_LEAN_SH : CGI_MODE_LEAN;
}

/* The site's mode under `path` (site.h): the checks cg_call makes on each
 * call of its short paths, made once here. */
static uint32_t cgi_site_mode(const cg_site *s, int path)
{
    if (!atomic_load(&s->real) || atomic_load(&s->domain)) return CGI_MODE_NONE;
    /* Idle (cgi_site_refresh): the wrapper calls `direct`, and its plain
     * counted call, which it tries first, must not count. */
    if (atomic_load(&s->direct)) return CGI_MODE_NONE;
    int exact = atomic_load(&cgi_cfg.timing) == CGI_TIMING_EXACT;
    int watch = atomic_load(&cgi_cfg.hang_ns) && atomic_load(&cgi_cfg.adapter);
    /* The counted mode: clockless unless exact timing is asked for; with
     * hang reports and a runtime, noting at entry whether it is held. */
    uint32_t counted = exact ? CGI_MODE_TIMED : watch ? CGI_MODE_WATCH : CGI_MODE_COUNTED;
    if (path != CGI_PATH_PY && atomic_load(&s->blocking)) {
        /* A blocking site's calls count its peak inside, exactly. Sampled,
         * on a short path (no clock, two atomic adds), whose entry notes the
         * runtime held with hang reports on, as the counted mode's does;
         * exact, the general path, which also times them. */
        uint32_t peaks = watch ? CGI_MODE_PEAKS_WATCH : CGI_MODE_PEAKS;
        if (exact) return CGI_MODE_NONE;
        switch (path) {
        case CGI_PATH_COUNTED:
        case CGI_PATH_DETECT: return peaks;
        case CGI_PATH_COUNTED_PY: return cgi_site_wants_leave(s) ? CGI_MODE_PEAKS_PY : peaks;
        }
        return CGI_MODE_NONE;
    }
    switch (path) {
    case CGI_PATH_COUNTED: return counted;
    case CGI_PATH_TRACED:
        /* A call whose arguments go with its event goes to cg_call: its frame holds them. */
        return cgi_site_traces_args(s) ? CGI_MODE_TRACED_ARGS : CGI_MODE_TRACED;
    case CGI_PATH_DETECT: return counted;
    case CGI_PATH_COUNTED_PY: return cgi_site_wants_leave(s) ? CGI_MODE_COUNTED_PY : counted;
    case CGI_PATH_PY: return cgi_site_wants_leave(s) ? cgi_mode_lean() : CGI_MODE_NONE;
    }
    return CGI_MODE_NONE;
}

/* Release: a thread that reads the mode sees the site resolved (cg_enter
 * reads it with acquire, the wrapper then reads `real`); `counted` as well
 * (the wrapper's plain counted call, layer.h). */
static void cgi_mode_set(cg_site *s, int path)
{
    uint32_t mode = cgi_site_mode(s, path);
    atomic_store_explicit(&s->state, cgi_stats_inline_state(s->ctr), memory_order_relaxed);
    atomic_store_explicit(&s->mode, mode, memory_order_release);
    atomic_store_explicit(&s->counted, mode == CGI_MODE_COUNTED ? s->ctr : NULL, memory_order_release);
    atomic_store_explicit(&s->peaks, mode == CGI_MODE_PEAKS ? s->ctr : NULL, memory_order_release);
}

void cgi_site_states_sync(cg_layer *l)
{
    for (unsigned i = 0; l && i < l->nsites; i++)
        atomic_store_explicit(&l->sites[i].state, cgi_stats_inline_state(l->sites[i].ctr), memory_order_relaxed);
}

void cgi_path_refresh(void)
{
    int path = cgi_path_compute();
    /* The modes depend on the path, the timing and whether entries note the runtime held. */
    int modes_for = path | atomic_load(&cgi_cfg.timing) << 8 |
                    (atomic_load(&cgi_cfg.hang_ns) && atomic_load(&cgi_cfg.adapter)) << 9;
    if (modes_for == atomic_load(&cgi_cfg.modes_for)) return;
    atomic_store(&cgi_cfg.modes_for, modes_for);
    /* A call racing this reads each site's mode before or after its store:
     * it takes a path one of the two configurations allows, as a call
     * racing a change always did (it finishes the way it started). */
    atomic_store(&cgi_cfg.path, path);
    for (cg_layer *l = cgi_layers; l; l = l->next)
        for (unsigned i = 0; i < l->nsites; i++)
            cgi_mode_set(&l->sites[i], path);
}

void cgi_site_refresh(cg_site *s)
{
    void *real = atomic_load_explicit(&s->real, memory_order_acquire);
    /* The thread-rule flags ride in the domain word (threads.h). */
    uint32_t dom = (atomic_load(&s->domain) & CGI_DOM_ID) | cgi_thr_site_flags(s);
    atomic_store(&s->domain, dom);
    /* Idle: straight to the driver. With statistics off every site that
     * needs nothing else; with them on, a site its policy leaves uncounted
     * (`count = no`), unless the timeline records every call. */
    int uncounted = atomic_load(&s->uncounted) && !atomic_load(&cgi_cfg.trace_on);
    int idle = real != NULL && (!atomic_load(&cgi_cfg.stats_on) || uncounted) && dom == 0;
    if (idle) {
        const cg_adapter *ad = atomic_load(&cgi_cfg.adapter);
        if (ad && atomic_load(&cgi_cfg.adapter_mode) == CG_ADAPTER_ACTIVE && cgi_site_wants_leave(s)) idle = 0;
    }
    atomic_store_explicit(&s->direct, idle ? real : NULL, memory_order_release);
    cgi_path_refresh();
    cgi_mode_set(s, atomic_load(&cgi_cfg.path));
}

void cgi_refresh_all(void)
{
    cgi_path_refresh();
    for (cg_layer *l = cgi_layers; l; l = l->next)
        for (unsigned i = 0; i < l->nsites; i++)
            cgi_site_refresh(&l->sites[i]);
}

void cgi_site_open(cg_site *s, uint32_t domain, uint64_t ran)
{
    pthread_mutex_lock(&cgi_cfg_lock);
    cg_layer *l = s->layer;
    cg_site *base = &l->sites[s->base];
    /* Every thread that waited for the lock may open it; the first here
     * does. Its number is the least of theirs: the thread that released the
     * lock first may come here second. */
    uint32_t now = atomic_load(&base->domain) & CGI_DOM_ID;
    if (atomic_load(&base->scope) != CG_SCOPE_ONCE || (now && now != domain)) {
        pthread_mutex_unlock(&cgi_cfg_lock);
        return;
    }
    if (now == domain) {
        for (unsigned i = 0; i < l->nsites; i++) {
            cg_site *v = &l->sites[i];
            if (v->base != base->index) continue;
            atomic_store(&v->domain, atomic_load(&v->domain) & ~(uint32_t)CGI_DOM_ID);
            cgi_site_refresh(v);
        }
        cgi_stats_note_policy(base);
    }
    cgi_stats_note_open(base, cgi_domain_name(domain), ran);
    pthread_mutex_unlock(&cgi_cfg_lock);
}

static int cgi_has_prefix(const cg_layer *l, const char *name)
{
    const char *p = l->prefixes;
    while (p && *p) {
        size_t n = strcspn(p, ",");
        if (n && strncmp(name, p, n) == 0) return 1;
        p += n;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return 0;
}

cg_layer *cgi_layer_for_name(const char *name)
{
    for (cg_layer *l = cgi_layers; l; l = l->next)
        if (cgi_has_prefix(l, name)) return l;
    return NULL;
}

static cg_site *cgi_site_in(cg_layer *l, const char *name)
{
    for (unsigned i = 0; i < l->nsites; i++)
        if (strcmp(l->sites[i].name, name) == 0) return &l->sites[l->sites[i].base];
    return NULL;
}

cg_site *cgi_site_find_nocase(const char *name)
{
    for (cg_layer *l = cgi_layers; l; l = l->next)
        for (unsigned i = 0; i < l->nsites; i++)
            if (strcasecmp(l->sites[i].name, name) == 0) return &l->sites[i];
    return NULL;
}

cg_site *cgi_site_find(const char *name)
{
    for (cg_layer *l = cgi_layers; l; l = l->next) {
        cg_site *s = cgi_site_in(l, name);
        if (s) return s;
    }
    return NULL;
}

int cgi_site_each(const char *name, void (*fn)(cg_site *, void *), void *arg)
{
    int found = 0;
    for (cg_layer *l = cgi_layers; l; l = l->next) {
        cg_site *base = cgi_site_in(l, name);
        if (!base) continue;
        found = 1;
        for (unsigned i = 0; i < l->nsites; i++)
            if (l->sites[i].base == base->index) {
                fn(&l->sites[i], arg);
                cgi_site_refresh(&l->sites[i]);
            }
        cgi_stats_note_policy(base);
    }
    if (!found) return cgi_fail(CG_ENOENT, "unknown entry point '%s'", name);
    return CG_OK;
}
