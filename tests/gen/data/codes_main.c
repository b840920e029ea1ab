/* Calls a layer generated from codes.h on both paths and checks the code
 * each gives the runtime (layer.h): on the short path cg_leave for success
 * or no result code, else cg_leave_code with the code; on the general path
 * the thunk's return value, 0 for success or no result code. Either way a
 * code goes as itself, one of int value 0 as CG_RESULT_ZERO, and the caller
 * gets the real function's result. The runtime's entry points are defined
 * here: cg_enter takes the short path when `short_path` is set. */
#include <callguard/layer.h>
#include <stdio.h>
#include <string.h>

#include "codes.h"

static cd_result_t real_return(cd_result_t r) { return r; }
static int real_count(int x) { return x; }

enum { LEFT = 1, LEFT_CODE, THUNK };
static int short_path, how, code;

void cg_layer_register(cg_layer *l)
{
    for (unsigned i = 0; i < l->nsites; i++) {
        if (strcmp(l->defaults[i].name, "cdReturn") == 0) atomic_store(&l->sites[i].real, (void *)real_return);
        if (strcmp(l->defaults[i].name, "cdCount") == 0) atomic_store(&l->sites[i].real, (void *)real_count);
    }
}
uintptr_t cg_enter(cg_site *s) { return short_path ? (uintptr_t)s : 0; }
void cg_leave(uintptr_t t) { (void)t, how = LEFT, code = 0; }
void cg_leave_code(uintptr_t t, int c) { (void)t, how = LEFT_CODE, code = c; }
int cg_call(cg_site *s, const void *k, cg_thunk t, void *f)
{
    (void)s, (void)k;
    how = THUNK, code = t(f);
    return 0;
}

static int failures;
static void expect(const char *call, int got, int want, int how_want, int code_want)
{
    const char *path = short_path ? "short path" : "general path";
    if (got != want) printf("%s on the %s returned %d, want %d\n", call, path, got, want), failures++;
    if (how != how_want || code != code_want)
        printf("%s on the %s gave the runtime %s %d, want %s %d\n", call, path,
               how == THUNK  ? "thunk code"
               : how == LEFT ? "cg_leave"
                             : "cg_leave_code",
               code,
               how_want == THUNK  ? "thunk code"
               : how_want == LEFT ? "cg_leave"
                                  : "cg_leave_code",
               code_want),
            failures++;
}

int main(void)
{
    for (short_path = 0; short_path <= 1; short_path++) {
        int done = short_path ? LEFT : THUNK, other = short_path ? LEFT_CODE : THUNK;
        expect("cdReturn(CD_OK)", cdReturn(CD_OK), CD_OK, done, 0);
        expect("cdReturn(CD_ERROR)", cdReturn(CD_ERROR), CD_ERROR, other, CD_ERROR);
        expect("cdReturn(CD_ERROR_ZERO)", cdReturn(CD_ERROR_ZERO), CD_ERROR_ZERO, other, CG_RESULT_ZERO);
        expect("cdCount(0)", cdCount(0), 0, done, 0);
        expect("cdCount(-3)", cdCount(-3), -3, done, 0);
    }
    if (failures) return 1;
    puts("ok");
    return 0;
}
