/* Linked against the toy layer that is not linked to the toy library (like
 * test_missing.c): the real functions are found only through
 * CALLGUARD_TOY_LIBRARY. Prints whether the kernel started it with
 * AT_SECURE, then what toyAdd returned. */
#include <stdio.h>
#include <sys/auxv.h>
#include <toy.h>

/* In the ASan build: LeakSanitizer cannot run in a setuid (non-dumpable)
 * process, and ASAN_OPTIONS cannot reach it there (its /proc/self/environ
 * is not readable to the new uid), so the program says it itself. */
const char *__asan_default_options(void);
__attribute__((visibility("default"))) const char *__asan_default_options(void) { return "detect_leaks=0"; }

int main(void)
{
    int32_t sum = 0;
    toy_result_t r = toyAdd(2, 3, &sum);
    printf("secure=%lu %d %d\n", getauxval(AT_SECURE), (int)r, (int)sum);
    return 0;
}
