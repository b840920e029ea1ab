/* Reading the values of settings. */
#define _GNU_SOURCE
#include "values.h"

#include "../common/errors.h"
#include "../common/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cgi_parse_transition(const char *v, cg_transition *out)
{
    int t = cgi_transition_value(v);
    if (t < 0) return cgi_fail(CG_EINVAL, "transition '%s': expected " CGI_TRANSITION_CHOICES, v);
    *out = (cg_transition)t;
    return CG_OK;
}

int cgi_parse_scope(const char *v, cg_scope *out)
{
    int s = cgi_scope_value(v);
    if (s < 0) return cgi_fail(CG_EINVAL, "scope '%s': expected " CGI_SCOPE_CHOICES, v);
    *out = (cg_scope)s;
    return CG_OK;
}

int cgi_parse_bool(const char *v, int *out)
{
    if (strcmp(v, "yes") == 0 || strcmp(v, "true") == 0 || strcmp(v, "1") == 0)
        *out = 1;
    else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0 || strcmp(v, "0") == 0)
        *out = 0;
    else
        return cgi_fail(CG_EINVAL, "'%s': expected yes or no", v);
    return CG_OK;
}

int cgi_parse_ms(const char *v, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long n = strtoul(v, &end, 10);
    /* strtoul skips leading blanks and takes a sign: only digits are a number here. */
    if (!*v || *end || errno || n < 1 || n > 3600000 || !(v[0] >= '0' && v[0] <= '9'))
        return cgi_fail(CG_EINVAL, "'%s': expected a whole number of milliseconds from 1 to 3600000", v);
    *out = (uint32_t)n;
    return CG_OK;
}

int cgi_valid_site_name(const char *s)
{
    if (!*s || strlen(s) >= CGI_NAME_MAX) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}
