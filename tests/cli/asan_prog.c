/* A program built with AddressSanitizer and linked to its runtime (gcc's
 * -fsanitize=address: libasan.so), which checks at start that it comes
 * first among the program's libraries. Prints "asan program: ok" after a
 * checked allocation; with "options", the ASAN_OPTIONS it was given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "options") == 0) {
        const char *o = getenv("ASAN_OPTIONS");
        printf("ASAN_OPTIONS=%s\n", o ? o : "(unset)");
        return 0;
    }
    char *volatile p = malloc(16);
    if (!p) return 1;
    p[15] = 'k';
    printf("asan program: o%c\n", p[15]);
    free(p);
    return 0;
}
