/* Calls a layer generated from codes.h on its three paths and checks the
 * code each gives the runtime (layer.h): on the short path cg_leave for
 * success or no result code, else cg_leave_code with the code; on the
 * general path the thunk's return value, 0 for success or no result code;
 * the plain counted call (cg_site_counted) gives success to no one, having
 * counted the call and left the slot itself, else cg_leave_code. Either way
 * a code goes as itself, one of int value 0 as CG_RESULT_ZERO, and the
 * caller gets the real function's result. A call whose event carries its
 * arguments (layer_args.h) gives cg_leave_args success, else
 * cg_leave_args_code the code, each with the result and the argument as
 * the event's words.
 * The runtime's entry points are defined here: cg_enter takes the short path
 * when `path` is SHORT, cg_enter_args when it is ARGS (the sites' mode then
 * CG_MODE_TRACED_ARGS); the sites are counted ones when it is COUNTED. */
#include <callguard/layer.h>
#include <stdio.h>
#include <string.h>

#include "codes.h"

static cd_result_t real_return(cd_result_t r) { return r; }
static int real_count(int x) { return x; }

enum { LEFT = 1, LEFT_CODE, THUNK };
enum { GENERAL, SHORT, COUNTED, ARGS };
static int path, how, code;
static cg_layer *layer;

/* The runtime's thread slot and a site's record, as the wrapper sees them. */
__thread cg_slot *cg_my_slot;
static cg_slot slot;
static _Atomic uint64_t record[8];
static uint64_t words[2];
static unsigned nwords;

void cg_layer_register(cg_layer *l)
{
    layer = l;
    for (unsigned i = 0; i < l->nsites; i++) {
        l->sites[i].slot_tp = cg_tp_offset(&cg_my_slot); /* where the wrapper finds cg_my_slot */
        if (strcmp(l->defaults[i].name, "cdReturn") == 0) atomic_store(&l->sites[i].real, (void *)real_return);
        if (strcmp(l->defaults[i].name, "cdCount") == 0) atomic_store(&l->sites[i].real, (void *)real_count);
    }
}
uintptr_t cg_enter(cg_site *s) { return path == SHORT ? (uintptr_t)s : 0; }
/* Either leaves the slot when it was the counted call's, as the runtime does. */
void cg_leave(uintptr_t t)
{
    if (t == (uintptr_t)&slot) slot.counters = NULL;
    how = LEFT, code = 0;
}
void cg_leave_code(uintptr_t t, int c)
{
    if (t == (uintptr_t)&slot) slot.counters = NULL;
    how = LEFT_CODE, code = c;
}
uintptr_t cg_enter_args(cg_site *s) { return path == ARGS ? (uintptr_t)s : 0; }
void cg_leave_args(uintptr_t t, const uint64_t *w, uint32_t n, uint32_t outs)
{
    (void)t, (void)outs;
    nwords = n;
    memcpy(words, w, (n < 2 ? n : 2) * sizeof *w);
    how = LEFT, code = 0;
}
void cg_leave_args_code(cg_site *s, uintptr_t t, int c, const uint64_t *w, uint32_t n)
{
    (void)s;
    cg_leave_args(t, w, n, 0);
    how = LEFT_CODE, code = c;
}
int cg_call(cg_site *s, const void *k, cg_thunk t, void *f)
{
    (void)s, (void)k;
    how = THUNK, code = t(f);
    return 0;
}

static int failures;
static void expect(const char *call, int got, int want, int how_want, int code_want)
{
    const char *where = path == SHORT     ? "short path"
                        : path == COUNTED ? "counted call"
                        : path == ARGS    ? "arguments' path"
                                          : "general path";
    if (got != want) printf("%s on the %s returned %d, want %d\n", call, where, got, want), failures++;
    if (path == ARGS && (nwords != 2 || words[0] != (uint32_t)got))
        printf("%s on the %s gave %u words, the first %llu\n", call, where, nwords, (unsigned long long)words[0]),
            failures++;
    nwords = 0;
    /* Counted: in the slot's run of the record's calls, and what runs ended added to the record. */
    uint64_t calls = atomic_load(&record[1]) +
                     (atomic_load(&slot.last) == (void *)record ? atomic_load(&slot.seq) - atomic_load(&slot.from) : 0);
    if (path == COUNTED && (slot.counters != NULL || atomic_load(&slot.seq) != calls))
        printf("%s on the counted call left the slot inside a call or miscounted\n", call), failures++;
    if (how != how_want || code != code_want)
        printf("%s on the %s gave the runtime %s %d, want %s %d\n", call, where,
               how == THUNK  ? "thunk code"
               : how == LEFT ? "cg_leave"
                             : "cg_leave_code",
               code,
               how_want == THUNK  ? "thunk code"
               : how_want == LEFT ? "cg_leave"
                                  : "cg_leave_code",
               code_want),
            failures++;
    how = code = 0;
}

int main(void)
{
    cg_my_slot = &slot;
    slot.calls_off = sizeof(uint64_t); /* each call counted in record[1] */
    for (path = GENERAL; path <= ARGS; path++) {
        for (unsigned i = 0; i < layer->nsites; i++) {
            atomic_store(&layer->sites[i].counted, path == COUNTED ? (struct cg_counters *)record : NULL);
            atomic_store(&layer->sites[i].mode, path == ARGS ? CG_MODE_TRACED_ARGS : 0);
        }
        int done = path == SHORT || path == ARGS ? LEFT : path == COUNTED ? 0 : THUNK;
        int other = path == GENERAL ? THUNK : LEFT_CODE;
        how = code = 0;
        expect("cdReturn(CD_OK)", cdReturn(CD_OK), CD_OK, done, 0);
        expect("cdReturn(CD_ERROR)", cdReturn(CD_ERROR), CD_ERROR, other, CD_ERROR);
        expect("cdReturn(CD_ERROR_ZERO)", cdReturn(CD_ERROR_ZERO), CD_ERROR_ZERO, other, CG_RESULT_ZERO);
        expect("cdCount(0)", cdCount(0), 0, done, 0);
        expect("cdCount(-3)", cdCount(-3), -3, done, 0);
    }
    /* A counted call the watchdog marked is left by cg_leave. */
    path = COUNTED;
    for (unsigned i = 0; i < layer->nsites; i++)
        atomic_store(&layer->sites[i].counted, (struct cg_counters *)record);
    atomic_store(&slot.mark, 1);
    expect("cdCount(5), marked", cdCount(5), 5, LEFT, 0);
    if (failures) return 1;
    puts("ok");
    return 0;
}
