/* callguard/layer_args.h: how a generated layer describes its entry points'
 * arguments to the timeline (layer ABI 13), included by callguard/layer.h.
 * callguard-gen writes one cg_args per entry point from the API header: each
 * argument's name, where it sits in the wrapper's frame (struct
 * cgl_fr_<name>) and how it is shown; the runtime copies the values after
 * the call, and the timeline's writer names them (docs/report.md,
 * "Timeline"). */
#ifndef CALLGUARD_LAYER_ARGS_H
#define CALLGUARD_LAYER_ARGS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The arguments a traced call records (ABI 13; docs/report.md,
 * "Timelines"): read from the wrapper's frame (struct cgl_fr_<name>) after
 * the real call, on the general path, only while the timeline is on. */
enum cg_arg_kind {
    CG_ARG_INT = 1,    /* a signed integer */
    CG_ARG_UINT = 2,   /* an unsigned integer (a size, a count, a bitfield) */
    CG_ARG_HEX = 3,    /* a handle or a pointer */
    CG_ARG_ENUM = 4,   /* an integer the header names (`names`) */
    CG_ARG_STR = 5,    /* a NUL-terminated string, copied bounded */
    CG_ARG_OUT = 6,    /* a pointer to one value the call returns, read after it: shown as `out_kind` */
    CG_ARG_RESULT = 7, /* a result code, named by the layer's result_name */
    CG_ARG_FLOAT = 8   /* a double or float (shown as its value) */
};
typedef struct cg_enum_name {
    long long value;
    const char *name;
} cg_enum_name;
/* What the call path reads of an argument: 8 bytes, so that a site's
 * table and its arguments share one cache line (the generator lays out
 * cg_args and up to five cg_arg in one aligned line). */
typedef struct cg_arg {
    uint16_t offset;  /* offsetof(struct cgl_fr_<name>, param) */
    uint8_t size;     /* sizeof the member (of the pointee for CG_ARG_OUT) */
    uint8_t kind;     /* enum cg_arg_kind */
    uint8_t out_kind; /* CG_ARG_OUT: how the value pointed to is shown (INT, UINT, HEX, ENUM, RESULT) */
    uint8_t out_size; /* CG_ARG_OUT: sizeof the value pointed to */
    uint16_t nnames;  /* CG_ARG_ENUM (or out_kind ENUM): the names, sorted by value */
} cg_arg;
/* What only the timeline's writer reads: an argument's name, and its
 * enum's names (CG_ARG_ENUM, or out_kind ENUM) or NULL. */
typedef struct cg_arg_name {
    const char *name; /* the header's parameter name */
    const cg_enum_name *names;
} cg_arg_name;
typedef struct cg_args {
    uint32_t nargs;
    uint16_t ret_offset; /* the frame's cgl_ret */
    uint8_t ret_size;    /* 0: void */
    uint8_t ret_kind;    /* CG_ARG_RESULT, HEX, INT, UINT, ENUM, FLOAT */
    const cg_arg *arg;
    const cg_arg_name *names; /* nargs of them */
} cg_args;

#ifdef __cplusplus
}
#endif
#endif
