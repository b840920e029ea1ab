/* Reading the values of settings (the environment, policy files, the C API).
 * Each returns CG_OK or CG_EINVAL with a message naming the bad value and
 * what is accepted. */
#ifndef CGI_VALUES_H
#define CGI_VALUES_H

#include "internal.h"

CGI_HIDDEN int cgi_parse_transition(const char *v, cg_transition *out);
CGI_HIDDEN int cgi_parse_scope(const char *v, cg_scope *out);
CGI_HIDDEN int cgi_parse_bool(const char *v, int *out);
CGI_HIDDEN int cgi_parse_ms(const char *v, uint32_t *out);
/* Letters, digits and '_', shorter than CGI_NAME_MAX. */
CGI_HIDDEN int cgi_valid_site_name(const char *s);

#endif
