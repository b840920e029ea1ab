/* Calls that wait behind another thread's call inside the driver: a lock
 * of the driver's own, held across a wait, that callguard cannot see.
 * Known from the quirks file: where a process matched a quirk with
 * `waits_behind` (its record's waiters), a call in flight of one of those
 * that began after a call of the quirk's first `serialize` entry point (its
 * holder, still in flight, on another thread) waits behind it. Read
 * from the statistics file only: the hang page's calls and the quirks the
 * process matched (docs/quirks.md, rocm-systems #11678). Used by the
 * runtime's hang block on stderr, callguard status and the report. */
#include "behind.h"

#include <string.h>

/* Is name[0..n) one of the comma-separated entry points of `sites`? */
static int cgi_behind_listed(const char *sites, size_t cap, const char *name, size_t n)
{
    for (const char *p = sites, *end = sites + strnlen(sites, cap); p < end;) {
        while (p < end && (*p == ' ' || *p == ','))
            p++;
        size_t k = strcspn(p, ",");
        if (p + k > end) k = (size_t)(end - p);
        while (k && p[k - 1] == ' ')
            k--;
        if (k == n && memcmp(p, name, n) == 0) return 1;
        p += k;
        while (p < end && *p != ',')
            p++;
    }
    return 0;
}

const char *cgi_behind_quirk(const cgi_quirk_rec *quirks, unsigned nquirks, const cgi_hang_call *calls, unsigned n,
                             unsigned i, int *holder)
{
    *holder = -1;
    const cgi_hang_call *b = &calls[i];
    if (b->waiting) return NULL; /* it waits for a lock of callguard's: said already */
    /* A page read from a file may hold anything: its strings are compared within their fields. */
    size_t bn = strnlen(b->name, sizeof b->name);
    for (unsigned q = 0; q < nquirks; q++) {
        const cgi_quirk_rec *rec = &quirks[q];
        if (!atomic_load(&rec->valid) || !memchr(rec->name, '\0', sizeof rec->name) ||
            !cgi_behind_listed(rec->waiters, sizeof rec->waiters, b->name, bn))
            continue;
        /* The holder: the first entry point of the quirk's sites ("a, b:shared"). */
        const char *h = rec->sites, *end = rec->sites + sizeof rec->sites;
        while (h < end && *h == ' ')
            h++;
        size_t hn = 0;
        while (h + hn < end && h[hn] && h[hn] != ',' && h[hn] != ':' && h[hn] != ' ')
            hn++;
        /* The oldest call of the holder on another thread, inside the driver (not
         * waiting for a lock of callguard's) since before b began. */
        for (unsigned j = 0; j < n; j++)
            if (j != i && calls[j].tid != b->tid && !calls[j].waiting &&
                strnlen(calls[j].name, sizeof calls[j].name) == hn && memcmp(calls[j].name, h, hn) == 0 &&
                strncmp(calls[j].api, b->api, sizeof b->api) == 0 && calls[j].age_ns > b->age_ns &&
                (*holder < 0 || calls[j].age_ns > calls[*holder].age_ns))
                *holder = (int)j;
        if (*holder >= 0) return rec->name;
    }
    return NULL;
}
