/* Layers, sites and their policy slots (site.c), and the paths of cg_call
 * the process-wide configuration (config.h) allows. */
#ifndef CGI_SITE_H
#define CGI_SITE_H

#include "config.h"
#include "internal.h"

/* The registered layers, newest first. Written under cgi_cfg_lock. */
CGI_HIDDEN extern cg_layer *cgi_layers;
/* Recomputes site->direct from its policy and the global configuration. */
CGI_HIDDEN void cgi_site_refresh(cg_site *s);
CGI_HIDDEN void cgi_refresh_all(void);
/* Each site of `l` takes its record's state (cgi_stats_inline_state) into
 * its first line, after the states of the layer's records changed. */
CGI_HIDDEN void cgi_site_states_sync(cg_layer *l);
/* cg_call's paths (call.c). Each but the guarded one still checks the site
 * (resolved, not serialized) and the thread (not inside a guarded call). */
enum {
    CGI_PATH_GUARDED = 0, /* everything (the general path) */
    CGI_PATH_COUNTED,     /* statistics on a TSC, no adapter, no timeline */
    CGI_PATH_TRACED,      /* the same, or with an adapter that leaves nothing, recording the timeline */
    CGI_PATH_DETECT,      /* statistics on a TSC, an adapter that leaves nothing, no timeline:
                           * the adapter is asked only about a call as long as a stall */
    CGI_PATH_COUNTED_PY,  /* statistics on a TSC, the built-in CPython adapter active, no
                           * timeline: CGI_PATH_DETECT, leaving CPython where the site says */
    CGI_PATH_PY,          /* no statistics, the built-in CPython adapter active: leave it */
};
/* A site's `mode` (layer.h): which of cg_enter's short paths it takes,
 * computed from cgi_cfg.path and the site's own policy whenever either
 * changes, so cg_enter reads one word. Each but NONE means: resolved, not
 * serialized, no thread rules; the thread is still checked (not inside a
 * guarded call). */
enum {
    CGI_MODE_NONE = 0,                  /* cg_call */
    CGI_MODE_COUNTED = CG_MODE_COUNTED, /* CGI_PATH_COUNTED, CGI_PATH_DETECT, or CGI_PATH_COUNTED_PY
                                         * where the site stays in CPython: counted, timed by the
                                         * watchdog; a call it marks as long as a stall asks the
                                         * adapter, if any, whether the runtime was held. The
                                         * wrapper makes it itself (layer.h, cg_site_counted) */
    CGI_MODE_TIMED = 2,                 /* CGI_MODE_COUNTED under CALLGUARD_TIMING=exact: the call reads the clock */
    CGI_MODE_TRACED = 3,                /* CGI_PATH_TRACED */
    CGI_MODE_LEAN = 4,                  /* CGI_PATH_PY, the site leaves CPython (the interpreter not looked up yet) */
    CGI_MODE_COUNTED_PY = 5,            /* CGI_PATH_COUNTED_PY, the site leaves CPython */
    CGI_MODE_LEAN_PT = 6,               /* CGI_MODE_LEAN, the interpreter known to keep its thread state per thread */
    CGI_MODE_LEAN_SH = 7,               /* CGI_MODE_LEAN, the interpreter known to keep one for the process (<= 3.11) */
    CGI_MODE_WATCH = 8,                 /* CGI_MODE_COUNTED with hang reports on and an adapter: the entry notes
                                         * whether the runtime is held, and the Python line */
    CGI_MODE_PEAKS = 9,                 /* CGI_MODE_COUNTED for a blocking site: clockless, and its peak
                                         * inside counted exactly (two atomic adds on the record) */
    CGI_MODE_PEAKS_PY = 10,             /* CGI_MODE_COUNTED_PY for a blocking site, the same way */
    CGI_MODE_PEAKS_WATCH = 11,          /* CGI_MODE_PEAKS with hang reports on and an adapter: the entry
                                         * notes what CGI_MODE_WATCH's does */
    CGI_MODE_TRACED_ARGS = 12           /* CGI_PATH_TRACED for a site whose events carry its arguments: cg_enter
                                         * declines, and cg_call makes CGI_MODE_TRACED's call with the frame
                                         * (cgi_call_traced) */
};
/* CALLGUARD_TRACE_ARGS (default on): whether timeline events carry their
 * call's arguments (trace.h), which gives a traced site with arguments its
 * own mode (CGI_MODE_TRACED_ARGS). */
CGI_HIDDEN extern _Atomic int cgi_trace_args_on;
/* The lean mode for the interpreter as far as it is known (python.h): a
 * looked-up interpreter never changes, so LEAN_PT and LEAN_SH mean LEAN and
 * cg_enter may upgrade a site's LEAN to them at any time. */
CGI_HIDDEN uint32_t cgi_mode_lean(void);
/* Recomputes cgi_cfg.path, and every site's mode when it changed. Caller
 * holds cgi_cfg_lock. */
CGI_HIDDEN void cgi_path_refresh(void);
/* Opens a site of scope once serialized in `domain` after a call that
 * succeeded (ran: its number among the calls through the gate, 0 unknown): it and its variants are
 * no longer serialized, unless their policy changed since the call read it.
 * Takes cgi_cfg_lock; the caller holds no lock of the site's. */
CGI_HIDDEN void cgi_site_open(cg_site *s, uint32_t domain, uint64_t ran);
/* Finds a site (the base of its variants) by name; NULL if none. */
CGI_HIDDEN cg_site *cgi_site_find(const char *name);
/* A site whose name differs from this one only in case; NULL if none. */
CGI_HIDDEN cg_site *cgi_site_find_nocase(const char *name);
/* The layer whose prefixes the name starts with; NULL if none. */
CGI_HIDDEN cg_layer *cgi_layer_for_name(const char *name);
/* Calls fn on the site named and every variant sharing its policy. Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_site_each(const char *name, void (*fn)(cg_site *, void *), void *arg);

#endif
