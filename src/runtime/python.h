/* The CPython adapter (adapter_cpython.c). */
#ifndef CGI_PYTHON_H
#define CGI_PYTHON_H

#include "internal.h"

CGI_HIDDEN const cg_adapter *cgi_cpython_adapter_if_present(void);
CGI_HIDDEN extern const cg_adapter cgi_cpython_adapter;

typedef struct cgi_py_api {
    _Atomic int state; /* 0: not looked up yet, 1: found, -1: no CPython in this process */
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    int (*gil_check)(void);
    void *(*save)(void);
    void (*restore)(void *);
} cgi_py_api;
CGI_HIDDEN extern cgi_py_api cgi_py;
CGI_HIDDEN int cgi_py_holds_slow(void);

/* Does this thread hold the GIL (and may it let go of it)? */
static inline int cgi_py_holds(void)
{
    int st = atomic_load_explicit(&cgi_py.state, memory_order_acquire);
    if (__builtin_expect(st == 0, 0)) return cgi_py_holds_slow();
    return st > 0 && cgi_py.is_initialized() && !cgi_py.is_finalizing() && cgi_py.gil_check();
}

#endif
