/* The CALLGUARD_* variables (environment.c): read at start-up, and applied
 * one at a time by cg_configure. */
#ifndef CGI_ENVIRONMENT_H
#define CGI_ENVIRONMENT_H

#include "internal.h"

/* Applies one CALLGUARD_* variable. from_env: read at start-up, before any
 * layer registers (per-site settings are then only kept, not applied).
 * Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_configure_locked(const char *var, const char *value, int from_env);
/* "none", "auto" or "cpython". Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_runtime_set_locked(const char *name);
/* Reads every CALLGUARD_* variable of the environment: CALLGUARD_POLICY
 * first, then the others (later wins). Exits 2 on a bad one. */
CGI_HIDDEN void cgi_env_read(void);
/* Whether this process was started with raised privilege (AT_SECURE). */
CGI_HIDDEN int cgi_secure(void);
/* Where CALLGUARD_REPORT asked for the report at exit; NULL if nowhere. */
CGI_HIDDEN const char *cgi_env_report_path(void);

#endif
