/* A placeholder only, found when a soname shim is loaded outside `callguard
 * run`. A shim needs libcallguard-real-API.so, which `callguard run` links,
 * in the run's shim folder first on LD_LIBRARY_PATH, to the real vendor
 * library. The dynamic loader searches LD_LIBRARY_PATH before the shim's
 * DT_RUNPATH, so under `callguard run` the real library wins and this file is
 * never opened. Anywhere else the shim's run path ($ORIGIN/placeholder) finds
 * this file instead, so the shim's dependency resolves inside the install
 * tree and the wheel (auditwheel checks that), and a shim loaded by mistake
 * says why it cannot work; its calls then return the API's "missing" result
 * (src/runtime/resolve.c). It defines no API name, so nothing binds to it.
 * Built once per API (callguard_add_shim), with CG_SHIM_SONAME (its first shim's). */
#define _GNU_SOURCE
#include "../common/message.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void cg_placeholder_say(void)
{
    /* This file lies in SHIMS/placeholder/: name SHIMS. */
    Dl_info info;
    char *dir = NULL, *slash;
    if (dladdr((void *)cg_placeholder_say, &info) && info.dli_fname) dir = strdup(info.dli_fname);
    for (int up = 0; dir && up < 2 && (slash = strrchr(dir, '/')); up++)
        *slash = '\0';
    cgi_say("%s in %s is callguard's shim and works only under `callguard run`", CG_SHIM_SONAME,
            dir && *dir ? dir : "callguard/shims");
    free(dir);
}
