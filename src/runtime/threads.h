/* Thread rules (threads.c): the checker (--check-threads) and per-handle
 * locks (--serialize-handles) built from each site's cg_rule table, and the
 * holds of cg_handle_hold. docs/threads.md says what they do. */
#ifndef CGI_THREADS_H
#define CGI_THREADS_H

#include "domain.h"

/* The most rules of one site that are used. */
#define CGI_THR_MAX_RULES 8

/* What one call entered, for its leaving. */
typedef struct cgi_thr_call {
    unsigned nent, nlock;
    struct {
        void *e; /* the handle's entry in the checker's table */
        uint8_t write, destroy;
    } ent[CGI_THR_MAX_RULES];
    struct {
        uintptr_t handle;
        struct cgi_hl *l; /* its lock (hlock.h), while held */
        uint8_t write;
    } lock[CGI_THR_MAX_RULES];
} cgi_thr_call;

/* The CGI_DOM_* flags a site gets from its rules and the configuration. */
CGI_HIDDEN uint32_t cgi_thr_site_flags(const cg_site *s);
/* Gives the layer's sites their process-wide numbers (cg_site.gid).
 * Caller holds cgi_cfg_lock. */
CGI_HIDDEN void cgi_thr_layer_registered(cg_layer *l);

/* Takes the locks of the call's handles (flags has CGI_DOM_HLOCK); returns
 * 1 when it waited. Never waits while holding one of them. */
CGI_HIDDEN int cgi_thr_lock(const cg_site *s, const void *args, cgi_thr_call *c);
CGI_HIDDEN void cgi_thr_unlock(cgi_thr_call *c);
/* The checker, around the real call (flags has CGI_DOM_CHECK). */
CGI_HIDDEN void cgi_thr_check_enter(const cg_site *s, const void *args, cgi_thr_call *c);
CGI_HIDDEN void cgi_thr_check_leave(const cg_site *s, const void *args, cgi_thr_call *c);

/* Switches (caller holds cgi_cfg_lock, then refreshes every site:
 * cgi_refresh_all reads them through cgi_thr_site_flags). */
CGI_HIDDEN int cgi_thr_set_check(int on);
CGI_HIDDEN int cgi_thr_set_serialize(int on);
CGI_HIDDEN void cgi_thr_set_hold_ns(uint64_t ns);

CGI_HIDDEN void cgi_thr_after_fork_child(void);

#endif
