/* Calls that wait behind another thread's call inside the driver (behind.c). */
#ifndef CGI_BEHIND_H
#define CGI_BEHIND_H

#include "stats_file.h"

/* Where the process matched a quirk whose driver holds a lock across a wait
 * (its `waits_behind`; quirks[0..nquirks) its records), does calls[i] wait
 * behind another thread's call of that quirk's holder (its first `serialize`
 * entry point), in flight before it (calls[0..n): a hang page's)? The
 * quirk's name (its record's), *holder the index of that call; else NULL,
 * *holder -1. */
CGI_HIDDEN const char *cgi_behind_quirk(const cgi_quirk_rec *quirks, unsigned nquirks, const cgi_hang_call *calls,
                                        unsigned n, unsigned i, int *holder);

#endif
