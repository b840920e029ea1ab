/* Looking up what may be absent: a host runtime's functions, a library
 * that may not be loaded. A dlsym or dlopen that fails leaves its message
 * for dlerror(), so the program's own dlerror() would return callguard's
 * failure ("libcallguard.so.0: undefined symbol: jl_get_pgcstack") where
 * plainly it returns NULL. These read and drop the message of their own
 * failure. (A message the program left unread before is dropped by any dl
 * call, failing or not, glibc's as well: that one cannot be kept.) A file
 * includes this after defining _GNU_SOURCE (RTLD_DEFAULT, RTLD_NEXT). */
#ifndef CGI_PROBE_H
#define CGI_PROBE_H

#include <dlfcn.h>

static inline void *cgi_probe_sym(void *handle, const char *name)
{
    void *p = dlsym(handle, name);
    if (!p) (void)dlerror();
    return p;
}

static inline void *cgi_probe_open(const char *file, int flags)
{
    void *h = dlopen(file, flags);
    if (!h) (void)dlerror();
    return h;
}

#endif
