/*
 * The simulator's compiler library, opened on the first SPIR-V compile.
 *
 * NEO opens IGC (libigc.so) with dlopen when the first module is compiled, not at zeInit, so that first
 * zeModuleCreate takes glibc's loader locks: it waits while another thread holds them, e.g. inside
 * dl_iterate_phdr. The simulator does the same with libze_cgsim_compiler.so, which sits beside it and is loaded
 * by nothing else, so that wait (and the GIL deadlock it can close, docs/zesim.md) shows without a GPU.
 */
#include "internal.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#define COMPILER_LIBRARY "libze_cgsim_compiler.so"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[640]; /* why the library could not be opened; empty once it is */

static void open_compiler(void)
{
    /* The library's folder is the simulator's own, wherever the loader found it. */
    Dl_info self;
    if (!dladdr((void *)open_compiler, &self) || !self.dli_fname) {
        snprintf(failure, sizeof failure, "cannot tell the simulator's own folder (dladdr)");
        return;
    }
    const char *slash = strrchr(self.dli_fname, '/');
    int dir = slash ? (int)(slash - self.dli_fname + 1) : 0;
    char path[4096];
    if (snprintf(path, sizeof path, "%.*s%s", dir, self.dli_fname, COMPILER_LIBRARY) >= (int)sizeof path) {
        snprintf(failure, sizeof failure, "the path of %s is too long", COMPILER_LIBRARY);
        return;
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL); /* kept open for the process's life, as NEO keeps IGC */
    const char *(*version)(void) = lib ? (const char *(*)(void))dlsym(lib, "cgsim_compiler_version") : NULL;
    if (!version)
        snprintf(failure, sizeof failure, "cannot load the compiler library: %s", dlerror()); /* names the path */
}

const char *cgsim_compiler_open(void)
{
    pthread_once(&once, open_compiler);
    return failure[0] ? failure : NULL;
}
