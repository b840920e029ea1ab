/* gen.h: what the parts of callguard-gen share.
 *
 * The generator runs in three steps, one file each:
 *   policy.c  turns the INI policy, read by the shared reader
 *             (src/policy/policy_ini.c: syntax and values), into `policy`,
 *   parse.c   reads the API header with libclang, abi.c the headers of the
 *             API's other ABIs, then check.c checks the policy against what
 *             the headers declare (main.c calls each),
 *   emit.c    writes the layer's C file (and its list of pass-through names).
 * main.c parses the command line and writes the output atomically.
 * Every error is reported once, on stderr, by the step that finds it.
 * Floors, lowest first (tests/floors.py):
 *   0 gen.h              this map; what the steps share
 *   1 util               string lists, the policy's memory
 *   1 clang              libclang, linked or loaded at start (the pip package)
 *   2 values             names of values for the timeline: #define blocks by
 *                        their heading comment, the policy's outputs
 *   3 policy             the policy from the INI reader
 *   3 parse              the header through libclang
 *   4 abi                the other ABIs' headers against the header
 *   4 check              the policy against the header
 *   4 emit               the layer's C file
 *   5 main.c             the command line; each step in turn
 */
#ifndef CG_GEN_H
#define CG_GEN_H

#include "../common/names.h"

#include <stddef.h>
#include <stdio.h>

/* Exit status of every input error (usage, policy, header). */
#define GEN_EXIT_INPUT 2

/* A growable list of strings. */
typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

void strlist_push(strlist *l, const char *s);
void strlist_free(strlist *l);

/* Unset values of the numeric site fields. */
#define POLICY_UNSET (-1)

enum { TRANSITION_ALWAYS = 0, TRANSITION_BLOCKING = 1, TRANSITION_NEVER = 2 };
enum { SCOPE_PROCESS = 0, SCOPE_HANDLE = 1 };
enum { WRAPPER_GENERATED = 0, WRAPPER_HAND = 1, WRAPPER_FORWARD = 2 };
/* The thread-rule keys: common/names.h's CGI_RULE_KEY_LIST, in the order of
 * policy_ini.h's PINI_WRITES.. */
#define NRULE_KEYS CGI_NRULE_KEYS

/* One [entry point] section. */
typedef struct site_policy {
    char *name;
    int line;       /* of the section header, for later errors */
    int transition; /* POLICY_UNSET or TRANSITION_* */
    int blocking;   /* POLICY_UNSET, 0 or 1 */
    int collective; /* 1: the ranks of a job all call it (the report compares their counts) */
    int uncounted;  /* POLICY_UNSET, or 1: count = no (statistics on, its calls go straight through uncounted); 0 */
    int scope;      /* POLICY_UNSET or SCOPE_* */
    char *reason;
    char *wait_args; /* the wait_args value: parameter names, each with an optional `:word` */
    int wait_args_line;
    char *serialize;
    char *variant_of;
    int variant_line; /* of the variant_of key */
    int wrapper;      /* WRAPPER_*: generated, hand (written in cg_<api>_hand.c) or forward (no site) */
    int trace_args;   /* POLICY_UNSET or 1: a traced call records its arguments; 0: it does not */
    int states_line;  /* of its states key; 0: not set, the [api] list applies */
    strlist states;   /* result codes that report a state here (empty with states = none) */
    /* thread rules: the values of writes, reads, destroys, sets, launches (RULE_*), NULL where unset */
    char *rules[NRULE_KEYS];
    int rule_line[NRULE_KEYS];
} site_policy;

typedef struct policy {
    const char *path;    /* as given, for messages */
    char *name;          /* [api] name */
    char *header;        /* as written in #include <...> */
    strlist headers;     /* more headers, as written in #include <...> (resolved next to `header`) */
    strlist abi_headers; /* headers of the API's other ABIs, each read alone (abi.c), as in #include <...> */
    strlist prefixes;
    char *library;
    char *result; /* NULL: the API has no result type */
    char *success;
    char *missing;
    char *results;   /* "enum" or "FIRST..LAST" */
    char *errcode;   /* name of the out-parameter through which handle-returning calls report a result, or NULL */
    strlist outputs; /* [api] outputs: parameters (fnmatch patterns) that point to a value the call returns */
    strlist cflags;
    strlist passthrough; /* exported by the vendor library, not declared by the header: forwarded unguarded */
    strlist variants;    /* name suffixes (_v2, _ptds): a function named base+suffix shares base's site policy */
    int variants_line;
    char *real_prefix; /* the real function of NAME is real_prefix + NAME (MPI's PMPI_), or NULL */
    int search;        /* 1: the real library is looked for on LD_LIBRARY_PATH alone ([api] search) */
    int default_transition;
    int default_uncounted; /* [defaults] count = no */
    strlist states;        /* [api] states: result codes that report a state at every entry point */
    int states_line;       /* 0: not set */
    int api_line;          /* line of [api], for errors about missing keys */
    site_policy *sites;
    size_t nsites;
} policy;

/* Reads and validates the policy file. Prints `FILE:LINE: message` and
 * returns nonzero on error. */
int policy_read(const char *path, policy *p);
void policy_free(policy *p);
site_policy *policy_find_site(const policy *p, const char *name);

/* One parameter of an entry point, as C text ready to paste. */
typedef struct gen_param {
    char *name;       /* the header's name, or cg_aN when it has none */
    char *decl;       /* the declaration exactly as the header types it: `const uint32_t dims[3]` */
    char *frame_decl; /* the same with arrays and functions decayed to pointers, for the frame */
    int is_handle;    /* an opaque handle passed by value (cl_kernel, ze_kernel_handle_t, CUgraph) */
    int size;         /* bytes as passed (arrays and functions decay to pointers); 0: unknown */
    int floating;     /* a floating-point value (passed in another register than integers) */
    int wait_base;    /* how wait_args shows it (layer.h CG_WAIT_*): by its C type; 0: it cannot (a struct, a float) */
    /* How the timeline shows it (layer.h cg_arg): CG_ARG_* (0: not at all), and for a pointer to a value the
     * call returns (CG_ARG_OUT, the policy's outputs) how that value is shown and its size; the names of an
     * enum's values: index into gen_api.enums, or -1. */
    int trace_kind, out_kind, out_size, enum_index;
} gen_param;

/* wait_args: at most this many, each shown as (layer.h CG_WAIT_ARGS_MAX, CG_WAIT_*). */
#define WAIT_ARGS_MAX 4
enum { WAIT_INT = 1, WAIT_UINT = 2, WAIT_HEX = 3 };

/* One argument a blocking call waits on (wait_args). */
typedef struct gen_wait {
    size_t param; /* index into the function's params */
    char *as;     /* the policy's word for the layer's format, or NULL */
} gen_wait;

/* One handle parameter's thread rule: CG_RULE_* bits of layer.h. */
typedef struct gen_rule {
    size_t param; /* index into the function's params */
    unsigned access;
} gen_rule;

typedef struct gen_func {
    char *name;
    char *ret;        /* the return type spelled as an abstract declarator: `void *`, `toy_result_t` */
    char *ret_member; /* the frame's `cg_ret` member (a parameter may be named ret), declared with the return type */
    int ret_void;
    int ret_scalar;     /* (T)0 is a valid expression of the return type */
    int ret_word;       /* an integer, enum or pointer that fits a uintptr_t: returned through cg_leave */
    int ret_result;     /* returns the policy's result type: error-checked */
    int ret_size;       /* bytes of the return value (0: void) */
    int ret_floating;   /* returns a floating-point value */
    int ret_trace_kind; /* how the timeline shows the result (CG_ARG_*; 0: not at all) */
    int ret_enum;       /* its names: index into gen_api.enums, or -1 */
    char *origin;       /* NULL: declared by `header`; else the abi_header it comes from, with ABI-neutral types */
    char *callconv;     /* calling-convention macro written before the name, or NULL */
    char *decl_head;    /* `toy_result_t TOY_APICALL toyGetDevice(uint32_t index, toy_device_t *device)` */
    char *guarded_head; /* the same, named cgl_guarded_NAME: the body of a hand-written wrapper's guarded call */
    char *slow_head;    /* the same, named cgl_sl_NAME: the short paths (cg_enter), after the wrapper's fast path */
    char *general_head; /* the same, named cgl_gp_NAME: the general path (the frame and cg_call) */
    char *wrapper_head; /* origin only: the same, named cgl_w_NAME: the wrapper its IFUNC export answers */
    char *base;         /* the entry point whose policy and report row this one shares, or NULL */
    int hand;           /* wrapper = hand (its own or its base's section): the exported wrapper is hand-written */
    int forward;        /* wrapper = forward: no site; forwarded untouched like a pass-through name */
    gen_param *params;
    size_t nparams;
    int key_is_handle;     /* the first parameter is an opaque handle: the lock/statistics key */
    const strlist *states; /* the result codes that report a state here, or NULL (policy-owned) */
    gen_rule *rules;       /* thread rules, from its own section or its base's */
    size_t nrules;
    gen_wait *waits; /* wait_args, from its own section or its base's */
    size_t nwaits;
} gen_func;

/* A named result code. */
typedef struct gen_code {
    char *name;
    long long value;
} gen_code;

/* Names of an integer type's values: a C enum's constants, or the macros the header groups under a
 * comment naming the type (OpenCL's `/ * cl_device_info * /`), first name of each value. */
typedef struct gen_enum {
    char *type; /* the typedef (or `enum tag`) as the header spells it */
    gen_code *v;
    size_t n;
} gen_enum;

typedef struct gen_api {
    gen_func *funcs;
    size_t nfuncs;
    /* every name forwarded unguarded: the policy's passthrough list, then the
     * declared names whose section says wrapper = forward */
    strlist passthrough;
    gen_code *codes; /* every result code, first name of each value only */
    size_t ncodes;
    gen_code *names; /* every name of a result code, aliases too */
    size_t nnames;
    strlist fn_macros; /* function-like macros of the API's headers: a function of abi_headers may share a name */
    gen_enum *enums;   /* value names of the parameters' integer types (the timeline) */
    size_t nenums;
} gen_api;

/* Parses the policy's header(s) and fills `api`; checks the policy's result
 * settings against the header's codes. `incdirs` are the extra -I
 * directories of the command line. Returns nonzero after printing an error. */
int parse_api(const policy *p, const strlist *incdirs, gen_api *api);
/* The API's other ABIs ([api] abi_headers, abi.c): each header, read alone on the `abidirs`
 * folders, adds the functions `header` lacks with ABI-neutral types, and every function both
 * declare is checked to be forwarded whole. Returns nonzero after printing an error. */
int abi_merge(const policy *p, const strlist *abidirs, gen_api *api);
/* The policy's entry point sections against the entry points and result
 * codes parse.c found: fills each one's base, wrapper kind, states and
 * thread rules (check.c; main.c calls it after parse_api). Returns nonzero
 * after printing an error. */
int check_policy(const policy *p, gen_api *api);
/* Free what parse_api and check_policy built (util.c). */
void gen_api_free(gen_api *api);
void gen_func_free(gen_func *f);

/* Writes the layer. `command` is the command line to record in the first
 * line. Returns nonzero on a write error. */
int emit_layer(FILE *out, const policy *p, const gen_api *api, const char *command);
/* Writes cg_<name>_passthrough.h, the pass-through names as CGL_PT(index,
 * name) lines (written only when the policy has pass-through names). */
int emit_passthrough_list(FILE *out, const policy *p, const gen_api *api, const char *command);

/* Names of values (values.c). The heading comment of the block of
 * #defines holding line `line` of a header's text (`cl_device_info`, or
 * NULL), malloc'd; whether a heading names type t (not a bitfield); a
 * type's names, the first of each value, then sorted by value; whether a
 * parameter is one of the policy's outputs (or its errcode). */
char *gen_block_heading(const char *text, size_t size, unsigned line);
int gen_group_names(const char *heading, const char *type);
void gen_enum_add(gen_enum *e, const char *name, long long value);
void gen_enum_sort(gen_enum *e);
int gen_is_output(const policy *p, const char *name);

/* Helpers. */
/* One line on stderr: an error the step that found it reports once. */
void gen_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xrealloc(void *p, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
