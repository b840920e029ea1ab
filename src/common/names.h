/* The spelling of transition and scope values: one table read by the
 * runtime (settings, policy files, reports), the report reader and the CLI.
 * Self-contained (only <string.h> and the public enums), so any part of the
 * project can include it, the generator included. */
#ifndef CGI_NAMES_H
#define CGI_NAMES_H

#include <callguard/callguard.h>

#include <string.h>

/* Indexed by cg_transition and cg_scope. */
static const char *const cgi_transition_names[] = {"always", "blocking", "never"};
static const char *const cgi_scope_names[] = {"process", "handle", "once"};
#define CGI_NTRANSITIONS 3
#define CGI_NSCOPES 3
/* For messages: what a value may be. */
#define CGI_TRANSITION_CHOICES "always, blocking or never"
#define CGI_SCOPE_CHOICES "process, handle or once"

static inline const char *cgi_transition_name(unsigned t)
{
    return t < CGI_NTRANSITIONS ? cgi_transition_names[t] : "?";
}
static inline const char *cgi_scope_name(unsigned s) { return s < CGI_NSCOPES ? cgi_scope_names[s] : "?"; }

/* Returns the value named, or -1. */
static inline int cgi_transition_value(const char *name)
{
    for (int i = 0; i < CGI_NTRANSITIONS; i++)
        if (strcmp(name, cgi_transition_names[i]) == 0) return i;
    return -1;
}

static inline int cgi_scope_value(const char *name)
{
    for (int i = 0; i < CGI_NSCOPES; i++)
        if (strcmp(name, cgi_scope_names[i]) == 0) return i;
    return -1;
}

#endif
