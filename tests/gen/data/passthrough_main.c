/* Calls pass-through names of a generated layer. The layer's runtime calls
 * (cg_layer_register, cg_enter, cg_leave, cg_leave_code, cg_call,
 * cg_enter_args and its leaves, cg_resolve_passthrough, cg_my_slot) are
 * defined here, so
 * the test needs no libcallguard: cg_resolve_passthrough hands out the
 * "real" functions below and counts how often it is asked. */
#include <callguard/layer.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int resolves;
void cg_layer_register(cg_layer *l) { (void)l; }
int cg_call(cg_site *s, const void *k, cg_thunk t, void *f)
{
    (void)s, (void)k, (void)t, (void)f;
    return -1;
}
uintptr_t cg_enter(cg_site *s)
{
    (void)s;
    return 0;
}
void cg_leave(uintptr_t t) { (void)t; }
void cg_leave_code(uintptr_t t, int c) { (void)t, (void)c; }
uintptr_t cg_enter_args(cg_site *s)
{
    (void)s;
    return 0;
}
void cg_leave_args(uintptr_t t, const uint64_t *w, uint32_t n, uint32_t o) { (void)t, (void)w, (void)n, (void)o; }
void cg_leave_args_code(cg_site *s, uintptr_t t, int c, const uint64_t *w, uint32_t n)
{
    (void)s, (void)t, (void)c, (void)w, (void)n;
}
__thread cg_slot *cg_my_slot; /* never read: no site is a counted one here */

/* Every argument register and the stack, varargs included (al = number of vector registers). */
static double real_many(int a, int b, int c, int d, int e, int f, double x0, double x1, double x2, double x3, double x4,
                        double x5, double x6, double x7, int g, double x8, int nvar, ...)
{
    va_list ap;
    va_start(ap, nvar);
    double v = 0;
    for (int i = 0; i < nvar; i++)
        v = v * 10 + va_arg(ap, double);
    va_end(ap);
    return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + x0 + 2 * x1 + 3 * x2 + 4 * x3 + 5 * x4 + 6 * x5 +
           7 * x6 + 8 * x7 + 9 * x8 + v;
}
static const char *real_second(const char *s) { return s + 1; }

void *cg_resolve_passthrough(cg_layer *l, const char *name)
{
    resolves++;
    if (!l || !l->passthrough) return NULL;
    if (strcmp(name, "shPassMany") == 0) return (void *)real_many;
    if (strcmp(name, "shPassSecond") == 0) return (void *)real_second;
    return NULL;
}

double shPassMany(int, int, int, int, int, int, double, double, double, double, double, double, double, double, int,
                  double, int, ...);
const char *shPassSecond(const char *);

int main(void)
{
    double want = 1 + 4 + 9 + 16 + 25 + 36 + 49 + 0.5 + 2 * 1.5 + 3 * 2.5 + 4 * 3.5 + 5 * 4.5 + 6 * 5.5 + 7 * 6.5 +
                  8 * 7.5 + 9 * 8.5 + 123;
    for (int i = 0; i < 3; i++) {
        double got = shPassMany(1, 2, 3, 4, 5, 6, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 7, 8.5, 3, 1.0, 2.0, 3.0);
        if (got != want) {
            printf("shPassMany returned %f, expected %f\n", got, want);
            return 1;
        }
    }
    if (strcmp(shPassSecond("xyz"), "yz") != 0) return 1;
    printf("resolves=%d\n", resolves); /* once per name: later calls jump straight through the slot */
    return 0;
}
