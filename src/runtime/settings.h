/* Per-site settings (settings.c) from policy files and the environment.
 * Kept as a list and applied to each layer when it registers: layers
 * register from their constructors, after libcallguard's, possibly much
 * later via dlopen. */
#ifndef CGI_SETTINGS_H
#define CGI_SETTINGS_H

#include "internal.h"

enum { CGI_SET_TRANSITION, CGI_SET_SERIALIZE, CGI_SET_BLOCKING };

typedef struct cgi_setting {
    int kind;
    char *site; /* NULL: every site */
    cg_transition transition;
    char *domain; /* NULL: not serialized */
    cg_scope scope;
    int blocking;
    char *reason;
    char *origin; /* "CALLGUARD_SERIALIZE" or "policy.ini: [toyCompile]" */
    struct cgi_setting *next;
} cgi_setting;

/* Appends a setting (the caller fills in its values). Caller holds cgi_cfg_lock. */
CGI_HIDDEN cgi_setting *cgi_setting_add(int kind, const char *site, const char *origin);
/* Where the next setting will be appended: *mark is the first one added after. */
CGI_HIDDEN cgi_setting **cgi_settings_mark(void);
/* Drops every setting added since mark. */
CGI_HIDDEN void cgi_settings_drop_from(cgi_setting **mark);
/* Applies one setting to the layer's sites (all of them when it names none). */
CGI_HIDDEN int cgi_setting_apply(const cgi_setting *st, cg_layer *layer);
/* Applies every kept setting that names a site of the layer (or all sites);
 * exits 2 on a name with the layer's prefix that it lacks. Caller holds cgi_cfg_lock. */
CGI_HIDDEN void cgi_settings_apply_pending(cg_layer *layer);

/* Changes the sites of loaded layers now. Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_site_set_transition(const char *site, cg_transition t);
CGI_HIDDEN int cgi_site_set_serialize(const char *site, const char *domain, cg_scope scope);
CGI_HIDDEN int cgi_site_set_blocking(const char *site, int blocking, const char *reason);

#endif
