/* policy_ini.h: the one reader of callguard's policy files (the apis/ files and
 * the files CALLGUARD_POLICY names). callguard-gen and libcallguard both
 * compile policy_ini.c (hidden inside libcallguard), so both accept the same
 * files and refuse bad ones with the same `FILE:LINE: message`.
 *
 * The reader knows the syntax, the sections, every key and the form of every
 * value; it knows nothing of headers or loaded layers. It reads the whole
 * file and checks it before handing over the first section, so a consumer
 * sees either a valid file or none of it. Names are prefixed pini_ (policy
 * INI): internal to callguard, never part of the public cg_ API. */
#ifndef CG_POLICY_INI_H
#define CG_POLICY_INI_H

#include <stddef.h>

/* The most codes `states` may list (CG_MAX_STATES of layer.h). */
#define PINI_MAX_STATES 4

/* The kinds of section. */
typedef enum pini_kind { PINI_API, PINI_DEFAULTS, PINI_SITE } pini_kind;

/* Every key of every section; pini_keys[] describes each. */
typedef enum pini_key {
    /* [api]: how callguard-gen reads the header and describes the layer */
    PINI_NAME,
    PINI_HEADER,
    PINI_HEADERS,
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
    /* [defaults] and entry point sections */
    PINI_TRANSITION,
    /* entry point sections */
    PINI_BLOCKING,
    PINI_REASON,
    PINI_SERIALIZE,
    PINI_SCOPE,
    PINI_VARIANT_OF,
    PINI_WRAPPER,
    /* entry point sections: thread rules (docs/threads.md), lists of the header's parameter names */
    PINI_WRITES,
    PINI_READS,
    PINI_DESTROYS,
    PINI_SETS,
    PINI_LAUNCHES,
    /* [api] (every entry point) and entry point sections (that one, replacing [api]'s) */
    PINI_STATES,
    PINI_NKEYS
} pini_key;

typedef struct pini_key_info {
    const char *name;
    unsigned sections;         /* bit (1u << pini_kind) for each kind of section that accepts it */
    const char *const *values; /* the accepted words of a key with fixed values, else NULL */
    unsigned nvalues;
} pini_key_info;

extern const pini_key_info pini_keys[PINI_NKEYS];

/* Index of `value` among the words of a key with fixed values, or -1:
 * transition and scope as enum cg_transition and cg_scope number them
 * (src/runtime/names.h spells them), blocking no 0 / yes 1, wrapper
 * generated 0 / hand 1 / forward 2. */
int pini_word(pini_key key, const char *value);

/* One section, as read and checked. */
typedef struct pini_section {
    pini_kind kind;
    const char *name; /* "api", "defaults" or the entry point's name */
    int line;         /* of the [name] line */
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

#endif
