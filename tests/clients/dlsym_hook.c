/* A program's own dlsym interposer, built as hook libraries and capture
 * layers build theirs: preloaded, unversioned, counting its calls and
 * forwarding to the next dlsym, found with dlvsym(RTLD_NEXT). It counts
 * dladdr calls too (forwarded the same way). The program reads the counts
 * from cg_hook_dlsym_calls and cg_hook_dladdr_calls; they are printed at
 * exit on stderr. tests/clients/test_clients.py preloads it plainly and
 * under `callguard run`. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

long cg_hook_dlsym_calls, cg_hook_dladdr_calls;

static void *next_of(const char *name)
{
    void *p = dlvsym(RTLD_NEXT, name, "GLIBC_2.34");
    return p ? p : dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
}

void *dlsym(void *handle, const char *name)
{
    static void *(*next)(void *, const char *);
    if (!next) *(void **)&next = next_of("dlsym");
    __atomic_add_fetch(&cg_hook_dlsym_calls, 1, __ATOMIC_RELAXED);
    return next(handle, name);
}

int dladdr(const void *addr, Dl_info *info)
{
    static int (*next)(const void *, Dl_info *);
    if (!next) *(void **)&next = next_of("dladdr");
    __atomic_add_fetch(&cg_hook_dladdr_calls, 1, __ATOMIC_RELAXED);
    return next(addr, info);
}

__attribute__((destructor)) static void report(void)
{
    fprintf(stderr, "dlsym hook: %ld dlsym calls\n", __atomic_load_n(&cg_hook_dlsym_calls, __ATOMIC_RELAXED));
}
