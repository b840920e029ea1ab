/* shapes.h: one of each parameter and return shape the generator must copy
 * exactly: function pointers, const pointers, arrays, enums, unnamed
 * parameters, void returns, a calling-convention macro. */
#ifndef SHAPES_H
#define SHAPES_H

#include <stddef.h>
#include <stdint.h>
#include "shapes_helper.h"

#define SH_APICALL
#define SH_API __attribute__((visibility("default")))

typedef enum sh_result {
    SH_SUCCESS = 0,
    SH_ERROR_A = -1,
    SH_ERROR_B = -2,
    SH_ERROR_B_ALIAS = -2,
    SH_MISSING = -9
} sh_result_t;
typedef enum sh_mode { SH_MODE_A, SH_MODE_B } sh_mode_t;
typedef struct sh_ctx *sh_ctx_t;
typedef struct sh_desc {
    int x;
} sh_desc_t;
typedef void(SH_APICALL *sh_cb_t)(sh_ctx_t ctx, void *user);
typedef int sh_fn_t(int);

SH_API sh_result_t SH_APICALL shCreate(sh_ctx_t *out);
SH_API sh_result_t SH_APICALL shCallback(sh_ctx_t ctx, void(SH_APICALL *pfn_notify)(sh_ctx_t, void *), void *user);
SH_API sh_result_t SH_APICALL shTypedefCallback(sh_ctx_t ctx, sh_cb_t cb, void *user);
SH_API sh_result_t SH_APICALL shArrays(sh_ctx_t ctx, const uint32_t dims[3], const char *names[], int grid[2][4]);
SH_API sh_result_t SH_APICALL shConst(const sh_ctx_t ctx, const char *const text, char *const *argv,
                                      const void *restrict p);
SH_API sh_result_t SH_APICALL shEnum(sh_ctx_t, sh_mode_t, enum sh_mode, const sh_desc_t *);
SH_API void SH_APICALL shVoid(void);
SH_API void SH_APICALL shVoidArgs(sh_ctx_t ctx, size_t n);
SH_API void *SH_APICALL shAlloc(sh_ctx_t ctx, size_t size);
SH_API const char *SH_APICALL shName(sh_result_t r);
SH_API sh_desc_t SH_APICALL shDescByValue(sh_ctx_t ctx);
SH_API sh_cb_t SH_APICALL shGetCallback(sh_ctx_t ctx);
SH_API int (*shReturnsFnptr(int which))(double, sh_mode_t);
SH_API sh_result_t SH_APICALL shFnType(sh_fn_t *fn, int inner(int), void (*cbs[2])(int));
SH_API sh_result_t SH_APICALL shKeywords(sh_ctx_t ctx, int p, int f, int fn, int ret);
SH_API int shVariadic(sh_ctx_t ctx, ...);
SH_API sh_result_t SH_APICALL shCreate(sh_ctx_t *out);
static inline int shInline(int x) { return x; }

#endif
