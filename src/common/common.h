/* What every part of callguard shares: the runtime, the report, the
 * policy reader, the CLI and the module loader. Not installed.
 *
 * src/common is the ground floor. The house is in floors: a file includes
 * and calls only what is on a floor below its own (tests/floors.py checks
 * every #include and, with nm, every call). The folders of src/:
 * Folders, lowest first (N folder: what it holds; one floor, no calls across):
 *   0 common   this folder: names and limits, messages, the launcher's rank,
 *              value names, UTF-8, the statistics and trace files' layouts
 *              and names
 *   1 policy   the policy file's INI reader and the forms of its values
 *   2 report   reports and timelines written from a region or rings
 *   2 gen      callguard-gen, the layer generator (a program of its own)
 *   3 runtime  the guarded call and its configuration (libcallguard)
 *   3 load     the module cache (libcallguard-load, which links no libcallguard)
 *   4 layers   the generated layers (they call the runtime's layer.h API)
 *   4 adapters  the OCaml and Ruby host-runtime adapters
 *   4 pyext    the Python extension callguard._native
 *   5 cli      the callguard command (libcallguard's API, report, common)
 * Each folder's map (its internal.h, or the header of the folder's name)
 * gives its files' floors the same way; a file may use any file of a
 * folder below its own. This folder:
 * Floors, lowest first:
 *   0 common.h utf8.h names.h  this map, CGI_HIDDEN, the name limits, cgi_peak;
 *                              well-formed UTF-8, JSON strings; how policy
 *                              values are spelled
 *   0 secure_notice.h          the line a privileged process prints
 *   0 variables.h              the CALLGUARD_* variables, one list (CGI_SETTINGS)
 *   0 duration.h               a duration as people write it (--stuck 30s)
 *   1 message                  one-line messages on stderr
 *   1 file_names               the names of callguard's files, each pattern
 *                              once: made and parsed
 *   2 errors                   a failure's message (cg_last_error), status names
 *   2 launcher                 the rank a job's launcher gave a process
 *   2 stats_file.h trace_file.h  the statistics and trace files' layouts
 *   3 behind                   calls that wait behind another thread's call
 *                              inside the driver, known from the quirks a
 *                              process matched (rocm-systems #11678)
 */
#ifndef CGI_COMMON_H
#define CGI_COMMON_H

#include <callguard/callguard.h>
#include <callguard/layer.h>

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef CGI_HIDDEN
#define CGI_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Longest entry point and domain names. */
#define CGI_NAME_MAX 64
#define CGI_DOMAIN_NAME_MAX 40

/* How many threads are at one place at once (`now`), and the most ever
 * (`peak`): a site's threads inside its driver call, or waiting for its
 * lock (stats_file.h). Exact: every thread that arrives adds itself with
 * one atomic add, so each sees the count it made. */
typedef struct cgi_peak {
    _Atomic uint32_t now, peak;
} cgi_peak;

/* The layer's own count of a blocking site's threads inside (layer.h) is
 * the same pair: one primitive for both. */
_Static_assert(offsetof(cgi_peak, peak) == sizeof(uint32_t), "cg_peak_arrive's pair");

/* Cuts path, in place, to the folder that holds it: trailing slashes off,
 * then its last name; "/" stays "/", a bare name becomes ".". */
static inline void cgi_path_parent(char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == path)
        path[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(path, ".");
}

#endif
