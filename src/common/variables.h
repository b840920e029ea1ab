/* The CALLGUARD_* settings: one list, expanded wherever settings are listed.
 *
 * CGI_SETTINGS(X) gives one row per variable, X(ID, NAME, READ, WORDS,
 * EXPECTED, NAMES):
 *   ID        the setting's number, CGI_SETTING_<ID>
 *   NAME      the variable after CALLGUARD_; a NAME that starts with '_'
 *             stands for one variable per API (_LIBRARY: CALLGUARD_CL_LIBRARY)
 *   READ      how its value is read first (CGI_READ_<READ>)
 *   WORDS     READ WORD: the words, '|' between ("" is one too); EXPECTED:
 *             what a refusal says is expected
 *   NAMES     what a value names (CGI_NAMES_<NAMES>): a process started with
 *             raised privilege does not take a path from its caller
 * Expanded by src/runtime/environment.c (the table every variable is read
 * through, with each row's function, and the "unknown setting" message)
 * and src/cli/cli.c (`callguard run`'s options name the setting they set;
 * run_options.c checks their values and run_env.c hands them to the
 * program). Adding a setting is a row here, its function in the runtime's
 * table, its flag there if `run` has one, and its line in
 * docs/configuration.md. Self-contained, like names.h. */
#ifndef CGI_VARIABLES_H
#define CGI_VARIABLES_H

/* clang-format off */
#define CGI_SETTINGS(X)                                                                                                \
    X(SERIALIZE,         "SERIALIZE",         TEXT,   NULL, NULL,                                 NOTHING)            \
    X(TRANSITION,        "TRANSITION",        TEXT,   NULL, NULL,                                 NOTHING)            \
    X(RUNTIME,           "RUNTIME",           TEXT,   NULL, NULL,                                 NOTHING)            \
    X(REPORT,            "REPORT",            TEXT,   NULL, NULL,                                 FILE_OR_DASH)       \
    X(TRACE,             "TRACE",             TEXT,   NULL, NULL,                                 FILE_OR_DASH)       \
    X(TRACE_LINES,       "TRACE_LINES",       TEXT,   NULL, NULL,                                 FILE_OR_DASH)       \
    X(TRACE_MAX,         "TRACE_MAX",         TEXT,   NULL, NULL,                                 NOTHING)            \
    X(TRACE_ARGS,        "TRACE_ARGS",        WORD,   "on|off",                                                       \
      "on (each event carries its call's arguments) or off",                                     NOTHING)            \
    X(STALL_MS,          "STALL_MS",          MS,     NULL, NULL,                                 NOTHING)            \
    X(TIMING,            "TIMING",            WORD,   "sampled|exact",                                                \
      "sampled (the watchdog times calls by sampling) or exact (every call reads the clock)",     NOTHING)            \
    X(HANG_MS,           "HANG_MS",           MS_OFF, NULL, NULL,                                 NOTHING)            \
    X(SIGNALS,           "SIGNALS",           TEXT,   NULL, NULL,                                 NOTHING)            \
    X(POLICY,            "POLICY",            TEXT,   NULL, NULL,                                 FILE)               \
    X(QUIRKS,            "QUIRKS",            TEXT,   NULL, NULL,                                 FILE_OR_OFF)        \
    X(CHECK,             "CHECK",             WORD,   "threads|none|",                                                \
      "threads (check the thread rules) or none",                                                 NOTHING)            \
    X(CHECK_HOLD_US,     "CHECK_HOLD_US",     US,     NULL, NULL,                                 NOTHING)            \
    X(SERIALIZE_HANDLES, "SERIALIZE_HANDLES", BOOL,   NULL, NULL,                                 NOTHING)            \
    /* `callguard run --stuck AFTER|off` and `--on-stuck report|abort|CMD`: read by the CLI (src/cli/run_stuck.c);  \
     * a process checks the value it inherits. */                                                                    \
    X(STUCK,             "STUCK",             TEXT,   NULL, NULL,                                 NOTHING)            \
    X(ON_STUCK,          "ON_STUCK",          TEXT,   NULL, NULL,                                 NOTHING)            \
    X(STATS_DIR,         "STATS_DIR",         TEXT,   NULL, NULL,                                 FILE)               \
    X(STATS_LOST,        "STATS_LOST",        TEXT,   NULL, NULL,                                 FILE)               \
    /* libcallguard_load's module cache reads (and checks) these (docs/load.md) */                                     \
    X(CACHE,             "CACHE",             TEXT,   NULL, NULL,                                 FILE)               \
    X(CACHE_DIR,         "CACHE_DIR",         TEXT,   NULL, NULL,                                 FILE)               \
    X(CACHE_SIZE,        "CACHE_SIZE",        TEXT,   NULL, NULL,                                 FILE)               \
    X(LIBRARY,           "_LIBRARY",          TEXT,   NULL, NULL,                                 FILE)               \
    /* The API's own thread support: used as the library gives it, or every call serialized by the layer (MPI's:  \
     * docs/mpi.md). Read by the layer; a layer that has no such fix never reads it. */                              \
    X(THREADS,           "_THREADS",          WORD,   "library|serialize", "library or serialize", NOTHING)
/* clang-format on */

typedef enum cgi_setting_id {
#define CGI_SETTING_ID(id, name, read, words, expected, names) CGI_SETTING_##id,
    CGI_SETTINGS(CGI_SETTING_ID)
#undef CGI_SETTING_ID
        CGI_NSETTINGS
} cgi_setting_id;

/* How a value is read before its row's function takes it. */
typedef enum cgi_read {
    CGI_READ_TEXT,   /* as it is: the row's function reads it */
    CGI_READ_MS,     /* milliseconds, 1 to 3600000 (cgi_parse_ms) */
    CGI_READ_MS_OFF, /* the same, or off or 0: none */
    CGI_READ_US,     /* microseconds, 0 to 1000000 */
    CGI_READ_BOOL,   /* yes or no (cgi_parse_bool) */
    CGI_READ_WORD    /* one of the row's words, as its index */
} cgi_read;

/* What a value names. */
typedef enum cgi_names {
    CGI_NAMES_NOTHING,
    CGI_NAMES_FILE,         /* a file, a folder, a library or the module cache's size */
    CGI_NAMES_FILE_OR_DASH, /* an output: a file, or "-" for stderr */
    CGI_NAMES_FILE_OR_OFF   /* a file, or "off" */
} cgi_names;

/* Each setting's whole variable name, by its number ("CALLGUARD__LIBRARY"
 * for one per API). */
static const char *const cgi_setting_vars[] = {
#define CGI_SETTING_VAR(id, name, read, words, expected, names) "CALLGUARD_" name,
    CGI_SETTINGS(CGI_SETTING_VAR)
#undef CGI_SETTING_VAR
};

/* What a setting's values name, by its number. */
static const cgi_names cgi_setting_names[] = {
#define CGI_SETTING_NAMES(id, name, read, words, expected, names) CGI_NAMES_##names,
    CGI_SETTINGS(CGI_SETTING_NAMES)
#undef CGI_SETTING_NAMES
};

#endif
