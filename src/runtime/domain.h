/* Named lock domains (domain.c). */
#ifndef CGI_DOMAIN_H
#define CGI_DOMAIN_H

#include "internal.h"

/* Flags kept in the high bits of cg_site.domain beside the domain id
 * (threads.c sets them): a site with either set is never idle, and
 * cg_call's lean paths (which test `domain == 0`) send it to the guarded
 * path, so a site without thread rules pays nothing for them. */
#define CGI_DOM_ID 0x3fffffffu
#define CGI_DOM_CHECK (1u << 30) /* check the site's thread rules */
#define CGI_DOM_HLOCK (1u << 31) /* lock the site's handles */

#define CGI_MAX_DOMAINS 64
/* The id of a domain, created on first use; id NULL: only checks that the
 * name and scope could be used. Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_domain_get(const char *name, cg_scope scope, uint32_t *id);
CGI_HIDDEN const char *cgi_domain_name(uint32_t id);
/* What cgi_domain_lock took, for cgi_domain_unlock: a handle's lock
 * (hlock.h), or NULL for the domain's one mutex. */
typedef struct cgi_hl *cgi_dlock;
/* Takes the domain's lock for `key` (its handle scope's lock of that
 * handle, or the one mutex); sets *waited to 1 when another thread held it
 * and this one waited. waiting (NULL: not counted): the site's threads
 * waiting for it, counted only while one really waits. */
CGI_HIDDEN cgi_dlock cgi_domain_lock(uint32_t id, uint32_t scope, const void *key, int *waited, cgi_peak *waiting);
CGI_HIDDEN void cgi_domain_unlock(uint32_t id, cgi_dlock l);
CGI_HIDDEN void cgi_domains_after_fork_child(void);

#endif
