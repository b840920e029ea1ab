/* policy_ini.h: the one reader of callguard's policy files (the apis/ files and
 * the files CALLGUARD_POLICY names). callguard-gen and libcallguard both
 * compile policy_ini.c and policy_value.c (the forms of values; hidden
 * inside libcallguard), so both accept the same files and refuse bad ones
 * with the same `FILE:LINE: message`.
 *
 * The reader knows the syntax, the sections, every key and the form of every
 * value; it knows nothing of headers or loaded layers. It reads the whole
 * file and checks it before handing over the first section, so a consumer
 * sees either a valid file or none of it. Names are prefixed pini_ (policy
 * INI): internal to callguard, never part of the public cg_ API.
 * Floors, lowest first (tests/floors.py):
 *   0 policy_ini.h       this header: the sections, keys and the reader's API
 *   1 policy_value       the forms of values (what a key's value must look like)
 *   2 policy_ini.c       the reader
 */
#ifndef CG_POLICY_INI_H
#define CG_POLICY_INI_H

#include "../common/names.h"

#include <stddef.h>

/* The most codes `states` may list (CG_MAX_STATES of layer.h). */
#define PINI_MAX_STATES 4

/* The kinds of section. PINI_QUIRK is a quirks file's [quirk:NAME] (one
 * known driver bug: docs/quirks.md); policy files refuse it and quirks files
 * refuse the others. */
typedef enum pini_kind { PINI_API, PINI_DEFAULTS, PINI_SITE, PINI_QUIRK } pini_kind;

/* Every key of every section; pini_keys[] describes each. */
typedef enum pini_key {
    /* [api]: how callguard-gen reads the header and describes the layer */
    PINI_NAME,
    PINI_HEADER,
    PINI_HEADERS,
    PINI_ABI_HEADERS,
    PINI_PREFIX,
    PINI_LIBRARY,
    PINI_RESULT,
    PINI_SUCCESS,
    PINI_MISSING,
    PINI_RESULTS,
    PINI_ERRCODE,
    PINI_CFLAGS,
    PINI_PASSTHROUGH,
    PINI_VARIANTS,
    PINI_REAL_PREFIX,
    PINI_SEARCH,
    PINI_OUTPUTS,
    /* [defaults] and entry point sections */
    PINI_TRANSITION,
    /* entry point sections */
    PINI_BLOCKING,
    PINI_COLLECTIVE,
    PINI_COUNT,
    PINI_REASON,
    PINI_WAIT_ARGS,
    PINI_SERIALIZE,
    PINI_SCOPE,
    PINI_VARIANT_OF,
    PINI_WRAPPER,
    PINI_TRACE_ARGS,
/* entry point sections: thread rules (docs/threads.md), lists of the header's parameter names */
#define PINI_RULE_KEY(id, key, access) PINI_##id,
    CGI_RULE_KEY_LIST(PINI_RULE_KEY) /* PINI_WRITES .. PINI_LAUNCHES: common/names.h */
#undef PINI_RULE_KEY
    /* [api] (every entry point) and entry point sections (that one, replacing [api]'s) */
    PINI_STATES,
    /* [quirk:NAME]: what it matches, the fix, where it is documented */
    PINI_Q_API,
    PINI_Q_VENDOR,
    PINI_Q_DRIVER,
    PINI_Q_VERSIONS,
    PINI_Q_LIBRARY,
    PINI_Q_SERIALIZE,
    PINI_Q_SHARED,
    PINI_Q_DOMAIN,
    PINI_Q_SOURCE,
    PINI_Q_WHY,
    PINI_Q_SCOPE,
    PINI_Q_ADVICE,
    PINI_Q_WAITS_BEHIND,
    PINI_NKEYS
} pini_key;

typedef struct pini_key_info {
    const char *name;
    unsigned sections;         /* bit (1u << pini_kind) for each kind of section that accepts it */
    const char *const *values; /* the accepted words of a key with fixed values, else NULL */
    unsigned nvalues;
    /* 1: a list that may be given on several lines of one section, each
     * adding to it (a list longer than a line: the quirks' waits_behind) */
    unsigned repeats;
} pini_key_info;

extern const pini_key_info pini_keys[PINI_NKEYS];

/* Index of `value` among the words of a key with fixed values, or -1:
 * transition and scope as enum cg_transition and cg_scope number them
 * (src/common/names.h spells them), blocking no 0 / yes 1, wrapper
 * generated 0 / hand 1 / forward 2, a quirk's scope process 0 / once 1. */
int pini_word(pini_key key, const char *value);

/* One section, as read and checked. */
typedef struct pini_section {
    pini_kind kind;
    const char *name;              /* "api", "defaults" or the entry point's name */
    int line;                      /* of the [name] line */
    const char *value[PINI_NKEYS]; /* NULL where the key is not set */
    int key_line[PINI_NKEYS];      /* 0 where the key is not set */
} pini_section;

typedef struct pini_file pini_file;

/* Called for each section in file order, once the whole file is read and
 * valid. Returns 0 to go on; nonzero after pini_error() to stop. */
typedef int (*pini_section_fn)(pini_file *f, const pini_section *s, void *user);

/* Results of pini_read. */
enum { PINI_OK = 0, PINI_EIO = 1, PINI_EFORMAT = 2, PINI_ENOMEM = 3 };

/* Reads `path`. On an error, `err` holds one line without a newline:
 * "PATH:LINE: message" for a bad file, "cannot read PATH: reason" when it
 * cannot be read. */
int pini_read(const char *path, pini_section_fn fn, void *user, char *err, size_t errsize);

/* For the section callback: records "PATH:LINE: message" as the file's
 * error (the first one wins) and returns PINI_EFORMAT. */
int pini_error(pini_file *f, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *pini_path(const pini_file *f);

/* Calls fn(item, len, arg) for each item of a list split on any character
 * of `seps`, spaces around items trimmed, empty items dropped; stops at and
 * returns the first nonzero result. */
int pini_split(const char *v, const char *seps, int (*fn)(const char *item, size_t len, void *arg), void *arg);

/* Versions as quirks files write them: up to PINI_VERSION_PARTS numbers
 * split on dots ("26.27.39122.11", "2.38"). pini_version reads the leading
 * dotted numbers of s (a driver's "6.0+debian" is 6.0) and returns how many
 * parts it read, 0 when s does not start with a digit (or a part passes
 * 10^9). */
#define PINI_VERSION_PARTS 6
typedef struct pini_version_t {
    unsigned n;
    size_t used; /* characters read */
    unsigned long part[PINI_VERSION_PARTS];
} pini_version_t;
unsigned pini_version(const char *s, size_t len, pini_version_t *out);

/* "LOW .. HIGH": returns 0 when v is such a range (both bounds read whole). */
typedef struct pini_range {
    pini_version_t lo, hi;
} pini_range;
int pini_range_read(const char *v, pini_range *out);

/* Is `v` inside r? Parts are compared from the left, as far as both sides
 * have them: a bound with fewer parts takes in every version that starts
 * like it ("2.38 .. 2.38" is every 2.38.x), and so does a version with
 * fewer parts than the bound (a driver that reports only "39122" is inside
 * "39122.11 .. 39122.11"). */
int pini_range_has(const pini_range *r, const pini_version_t *v);

/* "SONAME LOW .. HIGH" of a quirk's library key: the soname's length (it
 * ends at the first blank), or 0 when v is not of that form. */
size_t pini_library_read(const char *v, pini_range *out);

#endif
