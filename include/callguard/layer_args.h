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

/* A site with arguments records them on a path of its own (layer ABI 14):
 * first in the layer's short path, while the site's mode is
 * CG_MODE_TRACED_ARGS (its events carry its arguments: the timeline on),
 * the wrapper asks cg_enter_args, which takes the call unless the thread is
 * inside a guarded call; it then makes the real call and hands the runtime
 * the event's words (layout: src/common/trace_file.h) made by generated
 * code, one store each: no table is read and no frame is packed. After a
 * code other than success the outputs are left to the runtime
 * (cg_leave_args_code), which reads them where the code is a state. */
struct cg_site;
#pragma GCC visibility push(default)
#if defined(__GNUC__) && !defined(__clang__)
#define CG_ARGS_NOPLT __attribute__((noplt))
#else
#define CG_ARGS_NOPLT
#endif
/* The call's entry (counted, timed, in flight), or 0 (the thread is inside a guarded call): the general
 * path. Only for a site whose mode read CG_MODE_TRACED_ARGS. */
CG_ARGS_NOPLT uintptr_t cg_enter_args(struct cg_site *site);
/* After success: the event with `n` words at w; `outs` the bits (1 << 16 + k) of the outputs read. */
CG_ARGS_NOPLT void cg_leave_args(uintptr_t token, const uint64_t *w, uint32_t n, uint32_t outs);
/* After another code (as a thunk returns it): counted, the same words, the outputs' unread (0): the
 * runtime reads them by the site's table where the code is a state, or an output is a result code. */
CG_ARGS_NOPLT void cg_leave_args_code(struct cg_site *site, uintptr_t token, int code, const uint64_t *w, uint32_t n);
#pragma GCC visibility pop

/* A value as an event's word: its bytes, zero-extended (what the table's
 * reader takes from a frame member of the same size). */
static inline uint64_t cg_word_of(const void *p, unsigned size)
{
    uint8_t b;
    uint16_t h;
    uint32_t w;
    uint64_t d;
    switch (size) {
    case 1: return __builtin_memcpy(&b, p, 1), b;
    case 2: return __builtin_memcpy(&h, p, 2), h;
    case 4: return __builtin_memcpy(&w, p, 4), w;
    case 8: return __builtin_memcpy(&d, p, 8), d;
    }
    return 0;
}
#define CG_WORD(v) cg_word_of(&(v), (unsigned)sizeof(v))

/* The path in the layer's short path (cgl_sl_NAME), written by the
 * generator: NAME, ARGS and CODE as layer.h's paths; N the event's words;
 * PACK the statements that fill cgl_w[0..N) and set cgl_outs (CG_ARG_WORD,
 * CG_OUT_WORD: the outputs last, read only after success). The _VOID form
 * has no result. */
#define CG_MODE_TRACED_ARGS 12u /* a site's mode (filled in by the runtime): the path below; ABI */
#define CG_SITE_TRACES_ARGS(name)                                                                                      \
    __builtin_expect(atomic_load_explicit(&cgl_sites[CGL_##name].mode, memory_order_acquire) == CG_MODE_TRACED_ARGS, 0)
#define CG_ARG_WORD(i, v) cgl_w[i] = CG_WORD(v)
#define CG_OUT_WORD(i, k, p)                                                                                           \
    do {                                                                                                               \
        int cgl_read = (p) != 0 && cgl_code == 0;                                                                      \
        cgl_w[i] = cgl_read ? cg_word_of((p), (unsigned)sizeof *(p)) : 0;                                              \
        cgl_outs |= (uint32_t)cgl_read << (16 + (k));                                                                  \
    } while (0)
#define CG_ARGS_CALL(name, args, code, n, pack)                                                                        \
    do {                                                                                                               \
        uintptr_t cgl_tok = CG_SITE_TRACES_ARGS(name) ? cg_enter_args(&cgl_sites[CGL_##name]) : 0;                     \
        if (cgl_tok != 0) {                                                                                            \
            __auto_type cgl_ret = CG_SITE_REAL(&cgl_sites[CGL_##name], name) args;                                     \
            int cgl_code = code(cgl_ret);                                                                              \
            uint64_t cgl_w[n];                                                                                         \
            uint32_t cgl_outs = 0;                                                                                     \
            if (CG_LIKELY(cgl_code == 0)) {                                                                            \
                pack;                                                                                                  \
                cg_leave_args(cgl_tok, cgl_w, n, cgl_outs);                                                            \
            } else {                                                                                                   \
                pack;                                                                                                  \
                cg_leave_args_code(&cgl_sites[CGL_##name], cgl_tok, cgl_code, cgl_w, n);                               \
            }                                                                                                          \
            return cgl_ret;                                                                                            \
        }                                                                                                              \
    } while (0)
#define CG_ARGS_CALL_VOID(name, args, n, pack)                                                                         \
    do {                                                                                                               \
        uintptr_t cgl_tok = CG_SITE_TRACES_ARGS(name) ? cg_enter_args(&cgl_sites[CGL_##name]) : 0;                     \
        if (cgl_tok != 0) {                                                                                            \
            CG_SITE_REAL(&cgl_sites[CGL_##name], name) args;                                                           \
            const int cgl_code = 0;                                                                                    \
            uint64_t cgl_w[n];                                                                                         \
            uint32_t cgl_outs = 0;                                                                                     \
            pack;                                                                                                      \
            (void)cgl_code;                                                                                            \
            cg_leave_args(cgl_tok, cgl_w, n, cgl_outs);                                                                \
            return;                                                                                                    \
        }                                                                                                              \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
