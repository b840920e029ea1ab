/* The quirks file (quirks.c, docs/quirks.md): known driver bugs keyed by
 * driver identity, each switching its fix (serializing entry points in a
 * domain) on for the whole process when a driver of the process matches. */
#ifndef CGI_QUIRKS_H
#define CGI_QUIRKS_H

#include "internal.h"
#include "../report/report.h"

/* CALLGUARD_QUIRKS / --quirks: "off", or the quirks file to use instead of
 * the shipped one. A bad file is refused whole ("FILE:LINE: message") and
 * changes nothing. Caller holds cgi_cfg_lock. */
CGI_HIDDEN int cgi_quirks_set_locked(const char *value);
/* At start-up, when CALLGUARD_QUIRKS said nothing: the shipped file beside
 * libcallguard ($ORIGIN/../share/callguard/quirks.ini), read when an API
 * first initializes (cg_layer_identify), before that call returns. A
 * shipped file that is missing means no quirks; a broken one is named on
 * stderr and ignored. */
CGI_HIDDEN void cgi_quirks_default(void);
/* A layer joining the process: the fixes of quirks already applied reach
 * its sites too. Caller holds cgi_cfg_lock. */
CGI_HIDDEN void cgi_quirks_apply_layer(cg_layer *l);
CGI_HIDDEN void cgi_quirks_after_fork_child(void);

/* Calls fn for each quirk of the file in use that serializes entry point
 * `name`, whatever driver it names (in the CLI, which reads no file at
 * start-up: the shipped one, unless --quirks said otherwise). Holds
 * cgi_cfg_lock around the calls. The report's cgi_report_quirks (start-up
 * sets it: the report is below the quirks). */
CGI_HIDDEN void cgi_quirks_naming(const char *name, void (*fn)(const cgi_quirk_view *, void *), void *arg);

#endif
