/* Named lock domains (domain.c). */
#ifndef CGI_DOMAIN_H
#define CGI_DOMAIN_H

#include "internal.h"

#define CGI_MAX_DOMAINS 64
#define CGI_STRIPES 64
/* The id of a domain, created on first use; id NULL: only checks that the
 * name and scope could be used. Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_domain_get(const char *name, cg_scope scope, uint32_t *id);
CGI_HIDDEN const char *cgi_domain_name(uint32_t id);
/* Returns 1 when the lock was held by another thread and this one waited. */
CGI_HIDDEN int cgi_domain_lock(uint32_t id, uint32_t scope, const void *key);
CGI_HIDDEN void cgi_domain_unlock(uint32_t id, uint32_t scope, const void *key);
CGI_HIDDEN void cgi_domains_after_fork_child(void);

#endif
