/* Linked against the toy layer that is not linked to the toy library (like
 * test_missing.c): the real functions are found only through
 * CALLGUARD_TOY_LIBRARY. Prints whether the kernel started it with
 * AT_SECURE, then what toyAdd returned. */
#include <stdio.h>
#include <sys/auxv.h>
#include <toy.h>

int main(void)
{
    int32_t sum = 0;
    toy_result_t r = toyAdd(2, 3, &sum);
    printf("secure=%lu %d %d\n", getauxval(AT_SECURE), (int)r, (int)sum);
    return 0;
}
