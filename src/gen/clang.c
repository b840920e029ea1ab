/* clang.c: where the generator's libclang and clang's builtin headers come from (clang.h). */
#include "clang.h"
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CG_CLANG_RESOURCE_INCLUDE
#define CG_CLANG_RESOURCE_INCLUDE NULL
#endif

#ifdef CG_GEN_DLOPEN
#include <dlfcn.h>
#include <sys/stat.h>

struct gen_clang_table gen_clang;

/* The folder of this executable (PKG/_tree/bin in the Python package), or NULL. */
static char *exe_dir(void)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) return NULL;
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash) return NULL;
    *slash = '\0';
    return xstrdup(path);
}

/* Fills the table from HANDLE; -1 naming the first name LIB lacks. */
static int fill_table(void *handle, const char *lib)
{
#define CG_CLANG_LOAD(name)                                                                                            \
    {                                                                                                                  \
        void *f = dlsym(handle, "clang_" #name);                                                                       \
        if (!f) {                                                                                                      \
            fprintf(stderr, "callguard-gen: %s has no clang_%s: it is too old (libclang 14 or later needed)\n", lib,   \
                    #name);                                                                                            \
            return -1;                                                                                                 \
        }                                                                                                              \
        memcpy(&gen_clang.name, &f, sizeof f);                                                                         \
    }
    CG_CLANG_FUNCTIONS(CG_CLANG_LOAD)
#undef CG_CLANG_LOAD
    return 0;
}

int gen_clang_load(void)
{
    const char *env = getenv("CALLGUARD_LIBCLANG");
    if (env && *env) {
        void *h = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "callguard-gen: CALLGUARD_LIBCLANG=%s cannot be loaded: %s\n", env, dlerror());
            return -1;
        }
        return fill_table(h, env);
    }
    /* PyPI's libclang (the package `clang`, clang/native/libclang.so) in the site-packages that holds
     * this package (callguard/_tree/bin/callguard-gen); then the system's, by name. */
    char *dir = exe_dir();
    char *beside = dir ? xasprintf("%s/../../../clang/native/libclang.so", dir) : NULL;
    free(dir);
    const char *names[] = {beside,
                           "libclang.so",
                           "libclang.so.1",
                           "libclang-19.so.1",
                           "libclang-18.so.1",
                           "libclang-17.so.1",
                           "libclang-16.so.1",
                           "libclang-15.so.1",
                           "libclang-14.so.1"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (!names[i]) continue;
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            int rc = fill_table(h, names[i]);
            free(beside);
            return rc;
        }
    }
    fprintf(stderr,
            "callguard-gen: no libclang found: it reads API headers with libclang 14 or later.\n"
            "  pip install libclang     (PyPI's, into this Python environment; or pip install 'callguard[gen]')\n"
            "  apt install libclang1-14 (Debian, Ubuntu), or CALLGUARD_LIBCLANG=/path/to/libclang.so\n"
            "  looked for %s, then libclang.so and libclang-N.so.1 (N 19 to 14) on the library path\n",
            beside ? beside : "PyPI's libclang beside the package (this executable's folder is unknown)");
    free(beside);
    return -1;
}

static const char *built_in_resource_include(void)
{
    static char *found;
    static int looked;
    if (!looked) {
        looked = 1;
        char *dir = exe_dir();
        if (dir) {
            char *inc = xasprintf("%s/../share/callguard/clang/include", dir);
            char *probe = xasprintf("%s/stddef.h", inc);
            struct stat st;
            if (stat(probe, &st) == 0)
                found = inc;
            else
                free(inc);
            free(probe);
            free(dir);
        }
    }
    return found;
}
#else
int gen_clang_load(void) { return 0; }

static const char *built_in_resource_include(void) { return CG_CLANG_RESOURCE_INCLUDE; }
#endif

const char *gen_clang_resource_include(void)
{
    const char *env = getenv("CALLGUARD_CLANG_RESOURCE_INCLUDE");
    return env && *env ? env : built_in_resource_include();
}
