/* The spelling of transition and scope values and of the thread-rule keys:
 * one table each, read by the runtime (settings, policy files, reports),
 * the policy reader, the generator, the report reader and the CLI.
 * Self-contained (only <string.h> and the public enums), so any part of the
 * project can include it, the generator included. */
#ifndef CGI_NAMES_H
#define CGI_NAMES_H

#include <callguard/callguard.h>
#include <callguard/layer.h>

#include <string.h>

/* The thread-rule keys of a policy section (docs/thread-rules.md), in the
 * order policy files, `callguard list` and reports write them: X(ID, KEY,
 * ACCESS), ACCESS the cg_rule bits the key gives a parameter. */
#define CGI_RULE_KEY_LIST(X)                                                                                           \
    X(WRITES, "writes", CG_RULE_WRITE)                                                                                 \
    X(READS, "reads", CG_RULE_READ)                                                                                    \
    X(DESTROYS, "destroys", CG_RULE_WRITE | CG_RULE_DESTROY)                                                           \
    X(SETS, "sets", CG_RULE_SETS)                                                                                      \
    X(LAUNCHES, "launches", CG_RULE_LAUNCHES)

enum {
#define CGI_RULE_KEY_ID(id, key, access) CGI_RULE_##id,
    CGI_RULE_KEY_LIST(CGI_RULE_KEY_ID)
#undef CGI_RULE_KEY_ID
        CGI_NRULE_KEYS
};
static const char *const cgi_rule_keys[] = {
#define CGI_RULE_KEY_WORD(id, key, access) key,
    CGI_RULE_KEY_LIST(CGI_RULE_KEY_WORD)
#undef CGI_RULE_KEY_WORD
};
static const unsigned cgi_rule_key_access[] = {
#define CGI_RULE_KEY_ACCESS(id, key, access) access,
    CGI_RULE_KEY_LIST(CGI_RULE_KEY_ACCESS)
#undef CGI_RULE_KEY_ACCESS
};

/* Does a rule's access have key k? A destroy is a write named once, as
 * destroys. */
static inline int cgi_rule_has_key(unsigned access, int k)
{
    if (k == CGI_RULE_WRITES) return (access & CG_RULE_WRITE) && !(access & CG_RULE_DESTROY);
    return (access & cgi_rule_key_access[k]) == cgi_rule_key_access[k];
}

/* The key that names one access, the strongest first. */
static inline const char *cgi_rule_access_word(unsigned access)
{
    return access & CG_RULE_DESTROY ? cgi_rule_keys[CGI_RULE_DESTROYS]
           : access & CG_RULE_WRITE ? cgi_rule_keys[CGI_RULE_WRITES]
           : access & CG_RULE_READ  ? cgi_rule_keys[CGI_RULE_READS]
           : access & CG_RULE_SETS  ? cgi_rule_keys[CGI_RULE_SETS]
                                    : cgi_rule_keys[CGI_RULE_LAUNCHES];
}

/* Indexed by cg_transition and cg_scope. */
static const char *const cgi_transition_names[] = {"always", "blocking", "never"};
static const char *const cgi_scope_names[] = {"process", "handle", "once", "shared"};
#define CGI_NTRANSITIONS 3
#define CGI_NSCOPES 4
/* For messages: what a value may be. */
#define CGI_TRANSITION_CHOICES "always, blocking or never"
#define CGI_SCOPE_CHOICES "process, handle, once or shared"

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
