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
    _Atomic int state;     /* CGI_PY_* */
    unsigned long version; /* PY_VERSION_HEX of the running interpreter (Py_Version), 0 if before 3.11 */
    int (*is_initialized)(void);
    void *(*this_thread_state)(void); /* PyGILState_GetThisThreadState */
    void *(*unchecked_get)(void);     /* PyThreadState_GetUnchecked / _PyThreadState_UncheckedGet */
    void *(*save)(void);              /* PyEval_SaveThread */
    void (*restore)(void *);          /* PyEval_RestoreThread */
    /* Where _PyRuntime lies ([lo, hi), 0 when unknown): the GIL's mutex and
     * condition live in it (3.11 and before in its ceval state, 3.12+ in
     * the main interpreter's, which it holds), so a thread asleep on a
     * futex there waits for the GIL (hang reports, hang.c). */
    uintptr_t runtime_lo, runtime_hi;
} cgi_py_api;
CGI_HIDDEN extern cgi_py_api cgi_py;
CGI_HIDDEN int cgi_py_holds_slow(void);

/* Does this thread hold the GIL, and may it let go of it?
 *
 * Never where PyEval_SaveThread() would abort: before Py_Initialize, late
 * in finalization, after it, and on a thread that holds nothing (there
 * PyGILState_Check() says 1 in the first three, checks disabled or no
 * key). By interpreter version:
 *   3.12+  the thread state is thread-local, so a non-NULL current thread
 *          state means this thread holds the GIL (one load in libpython).
 *          Py_IsInitialized() first: it is documented false from the call
 *          of Py_FinalizeEx() until Py_Initialize() runs again, and after
 *          finalization the thread-local state is not guaranteed cleared.
 *   3.11-  the "current thread state" is process-wide (whichever thread
 *          holds the GIL), so it is compared with this thread's own, as
 *          PyGILState_Check does, without its two early "return 1"s. No
 *          Py_IsInitialized() call: the comparison alone is false before
 *          Py_Initialize and from the moment finalization tears down the
 *          auto thread state (_PyGILState_Fini clears autoInterpreterState,
 *          and PyGILState_GetThisThreadState then says NULL), and the
 *          current thread state is never dereferenced. Between the two,
 *          in module teardown, it is true on the finalizing thread, which
 *          does hold the GIL: CPython itself releases it there (its file
 *          I/O, flushing sys.stdout), other threads that try to take it
 *          exit (tests/python/test_pause.c makes such a call). */
static inline int cgi_py_holds_per_thread(void) { return cgi_py.is_initialized() && cgi_py.unchecked_get() != NULL; }

static inline int cgi_py_holds_shared(void)
{
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
