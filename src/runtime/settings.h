/* Per-site settings (settings.c), from policy files, the environment and
 * the C API. Applied now to the layers loaded, and kept for the layers that
 * register later: layers register from their constructors, after
 * libcallguard's, possibly much later via dlopen. */
#ifndef CGI_SETTINGS_H
#define CGI_SETTINGS_H

#include "internal.h"
#include "../common/names.h"

/* CGI_SET_RULES: a policy section's thread-rule keys, checked against the
 * layer's built-in rules (they are compiled in; nothing is applied). */
enum { CGI_SET_TRANSITION, CGI_SET_SERIALIZE, CGI_SET_BLOCKING, CGI_SET_STATES, CGI_SET_RULES, CGI_SET_COUNT };
#define CGI_RULE_KEYS CGI_NRULE_KEYS /* common/names.h */

typedef struct cgi_setting {
    int kind;
    char *site; /* NULL: every site */
    char *api;  /* with site NULL: only that layer's sites (a policy file's [defaults]); NULL: every layer's */
    cg_transition transition;
    char *domain; /* NULL: not serialized */
    cg_scope scope;
    int blocking;
    int count;                  /* CGI_SET_COUNT: 1 counted with statistics on, 0 left uncounted (`count = no`) */
    char *rules[CGI_RULE_KEYS]; /* CGI_SET_RULES: each key's value, NULL where unset */
    char *reason;               /* never freed: sites point at it */
    char *states;               /* CGI_SET_STATES: the code names ("" for none), resolved by each layer */
    char *origin;               /* "CALLGUARD_SERIALIZE", "policy.ini: [toyCompile]", "cg_serialize" */
    int from_env;               /* read at start-up: a bad name found later exits 2 */
    int matched;                /* applied to some layer */
    struct cgi_setting *next;
} cgi_setting;

/* Appends a setting (the caller fills in its values, then commits). Caller holds cgi_cfg_lock. */
CGI_HIDDEN cgi_setting *cgi_setting_add(int kind, const char *site, const char *origin);
/* Where the next setting will be appended: *mark is the first one added after. */
CGI_HIDDEN cgi_setting **cgi_settings_mark(void);
/* Drops every setting added since mark. */
CGI_HIDDEN void cgi_settings_drop_from(cgi_setting **mark);
/* Keeps the settings added since mark, read at start-up before any layer
 * registered: they are checked and applied as layers register. */
CGI_HIDDEN void cgi_settings_keep(cgi_setting **mark);
/* Checks the settings added since mark against the loaded layers, applies
 * them and keeps them for later layers. Returns
 *   CG_OK       every name is an entry point of a loaded layer;
 *   CG_PENDING  some name has no loaded layer's prefix: kept, applied when
 *               a layer with it registers (the message names the first);
 *   CG_ENOENT   a name has a loaded layer's prefix and that layer lacks it,
 *               or differs only in case from a loaded layer's entry point;
 *   CG_EINVAL   a domain name or scope that cannot be used.
 * On an error none of them is kept or applied. Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_settings_commit(cgi_setting **mark);
/* Applies every kept setting that names a site of the layer (or all
 * sites). A kept name the layer should have and lacks: from the start-up
 * environment, exit 2; from the C API, one line on stderr and the setting
 * is dropped. Caller holds cgi_cfg_lock. */
CGI_HIDDEN void cgi_settings_apply_pending(cg_layer *layer);
/* One line on stderr naming the kept settings that no layer ever had. */
CGI_HIDDEN void cgi_settings_report_unmatched(void);

#endif
