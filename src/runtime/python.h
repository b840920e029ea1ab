/* The CPython adapter (adapter_cpython.c). */
#ifndef CGI_PYTHON_H
#define CGI_PYTHON_H

#include "internal.h"

CGI_HIDDEN const cg_adapter *cgi_cpython_adapter_if_present(void);
CGI_HIDDEN extern const cg_adapter cgi_cpython_adapter;

/* How this interpreter tells that the calling thread holds the GIL. */
enum {
    CGI_PY_UNKNOWN = 0,    /* not looked up yet */
    CGI_PY_ABSENT = -1,    /* no CPython in this process */
    CGI_PY_SHARED = 1,     /* <= 3.11: one "current thread state" per process, compared with this thread's */
    CGI_PY_PER_THREAD = 2, /* >= 3.12: the current thread state is thread-local: non-NULL means held */
};

/* The interpreter's functions, looked up in the running process once
 * (cgi_py_lookup). Extensible: a part of the runtime that needs more of
 * CPython (frame information for a stall, say) adds its pointers after
 * these and looks them up in cgi_py_lookup; a missing optional symbol
 * leaves its pointer NULL and must not change `state`. */
typedef struct cgi_py_api {
    _Atomic int state; /* CGI_PY_* */
    unsigned long version; /* PY_VERSION_HEX of the running interpreter (Py_Version), 0 if before 3.11 */
    int (*is_initialized)(void);
    void *(*this_thread_state)(void); /* PyGILState_GetThisThreadState */
    void *(*unchecked_get)(void);     /* PyThreadState_GetUnchecked / _PyThreadState_UncheckedGet */
    void *(*save)(void);              /* PyEval_SaveThread */
    void (*restore)(void *);          /* PyEval_RestoreThread */
} cgi_py_api;
CGI_HIDDEN extern cgi_py_api cgi_py;
CGI_HIDDEN int cgi_py_holds_slow(void);

/* Does this thread hold the GIL, and may it let go of it?
 *
 * Py_IsInitialized() is documented to be false from the moment
 * Py_FinalizeEx() is called (CPython clears `initialized` right where it
 * marks the runtime finalizing, 3.11 to 3.13) until Py_Initialize() is
 * called again, and it is false before Py_Initialize: so it alone covers
 * "not before Py_Initialize, not during finalization", where
 * PyGILState_Check() says 1 and PyEval_SaveThread() would abort. Then:
 *   3.12+  the thread state is thread-local, so a non-NULL current thread
 *          state means this thread holds the GIL (one load in libpython);
 *   3.11-  the "current thread state" is process-wide (whichever thread
 *          holds the GIL), so it is compared with this thread's own, as
 *          PyGILState_Check does, without its two early "return 1"s (no
 *          key yet: covered by Py_IsInitialized; checks disabled once a
 *          subinterpreter exists: there it would say 1 on any thread). */
static inline int cgi_py_holds_per_thread(void) { return cgi_py.is_initialized() && cgi_py.unchecked_get() != NULL; }

static inline int cgi_py_holds_shared(void)
{
    if (!cgi_py.is_initialized()) return 0;
    void *cur = cgi_py.unchecked_get();
    return cur && cur == cgi_py.this_thread_state();
}

static inline int cgi_py_holds(void)
{
    int st = atomic_load_explicit(&cgi_py.state, memory_order_acquire);
    if (__builtin_expect(st == CGI_PY_PER_THREAD, 1)) return cgi_py_holds_per_thread();
    if (st == CGI_PY_SHARED) return cgi_py_holds_shared();
    if (st == CGI_PY_UNKNOWN) return cgi_py_holds_slow();
    return 0;
}

#endif
