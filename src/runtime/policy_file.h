/* Policy files (policy_file.c). */
#ifndef CGI_POLICY_FILE_H
#define CGI_POLICY_FILE_H

#include "internal.h"

/* Reads a policy file into the kept settings; a bad file adds none. Unless
 * from_env (start-up, before any layer), applies them to loaded layers.
 * Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_policy_load_locked(const char *path, int from_env);

#endif
