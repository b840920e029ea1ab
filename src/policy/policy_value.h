/* policy_value.h: the forms of policy values (policy_value.c), for the
 * reader (policy_ini.c): what each key's value must look like, and what a
 * message says is expected. Not for the reader's consumers. */
#ifndef CG_POLICY_VALUE_H
#define CG_POLICY_VALUE_H

#include "policy_ini.h"

/* Is v a well-formed value of key k? */
int pini_value_ok(pini_key k, const char *v);
/* What a value of k must be, for messages: "yes or no". */
const char *pini_value_expected(pini_key k);
/* The n characters of s are letters, digits or one of `extra`, and n > 0. */
int pini_chars_in(const char *s, size_t n, const char *extra);
/* The n characters of s are a C identifier. */
int pini_is_ident_n(const char *s, size_t n);

#endif
