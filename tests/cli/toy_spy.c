/* An interposer of someone else's, preloaded after callguard's layer: it
 * defines toyAdd, counts the calls and forwards with dlsym(RTLD_NEXT), which
 * from here lands in callguard's soname shim. The shim must not resolve its
 * "real" toyAdd to this spy, or the two call each other forever. Prints its
 * count at exit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <toy.h>

static atomic_int seen;

toy_result_t toyAdd(int32_t a, int32_t b, int32_t *sum)
{
    static toy_result_t (*next)(int32_t, int32_t, int32_t *);
    if (!next) next = (toy_result_t(*)(int32_t, int32_t, int32_t *))dlsym(RTLD_NEXT, "toyAdd");
    atomic_fetch_add(&seen, 1);
    return next(a, b, sum);
}

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "spy saw %d toyAdd calls\n", atomic_load(&seen));
}
