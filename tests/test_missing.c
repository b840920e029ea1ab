/* Linked against a toy layer that is NOT linked to the toy library: the
 * real functions can be found only through CALLGUARD_TOY_LIBRARY. Prints
 * what toyAdd returned. */
#include <stdio.h>
#include <toy.h>

int main(void)
{
    int32_t sum = 0;
    toy_result_t r1 = toyAdd(2, 3, &sum);
    toy_result_t r2 = toyAdd(2, 3, &sum); /* the second call must not repeat the message */
    printf("%d %d %d\n", (int)r1, (int)r2, (int)sum);
    return 0;
}
