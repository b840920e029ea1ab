/* What a program's own look-ups find (tests/clients/test_clients.py runs it
 * plainly and under `callguard run` and compares): for each NAME, whether
 * dlsym(RTLD_DEFAULT), dlsym(dlopen(NULL)) and dlsym(RTLD_NEXT) from the
 * main program find it, and whether a failed one set dlerror(). Then
 * 1,000 look-ups of each of close and cuserid (names that start with a
 * layer's prefix and that libc defines): whether each answered libc's
 * function, and how many dladdr calls a preloaded dlsym_hook.c counted
 * during them ("-" without it).
 *
 *   dlsym_probe NAME... */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int found(void *handle, const char *name, int *no_error)
{
    dlerror();
    void *p = dlsym(handle, name);
    if (!p && !dlerror()) *no_error = 1;
    return p != NULL;
}

static void loop(const char *name)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *want = libc ? dlsym(libc, name) : NULL;
    long *dladdrs = dlsym(RTLD_DEFAULT, "cg_hook_dladdr_calls");
    long before = dladdrs ? *dladdrs : 0;
    int right = want != NULL;
    for (int i = 0; i < 1000; i++)
        right &= dlsym(RTLD_DEFAULT, name) == want;
    if (dladdrs)
        printf("%s x1000: libc's %s, %ld dladdr calls\n", name, right ? "each time" : "NOT each time",
               *dladdrs - before);
    else
        printf("%s x1000: libc's %s, - dladdr calls\n", name, right ? "each time" : "NOT each time");
}

int main(int argc, char **argv)
{
    void *self = dlopen(NULL, RTLD_LAZY);
    for (int i = 1; i < argc; i++) {
        int no_error = 0;
        int d = found(RTLD_DEFAULT, argv[i], &no_error), m = found(self, argv[i], &no_error),
            n = found(RTLD_NEXT, argv[i], &no_error);
        printf("%s: default %d, dlopen(NULL) %d, next %d%s\n", argv[i], d, m, n, no_error ? " (no dlerror)" : "");
    }
    loop("close");
    loop("cuserid");
    return 0;
}
