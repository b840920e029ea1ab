/* The CPython adapter. No link dependency on libpython: the symbols are
 * looked up in the running process, once. holds() is false wherever
 * PyEval_SaveThread() would abort the process or release another thread's
 * GIL, some of them places where PyGILState_Check() says 1 (python.h says
 * how each interpreter version is asked).
 *
 * cg_enter()/cg_leave() recognize this adapter and call cgi_py_holds() and
 * PyEval_SaveThread/RestoreThread themselves, without the generic callback
 * hops: leaving the GIL is the whole point of the call there. */
#define _GNU_SOURCE
#include "python.h"
#include "pyread.h"
#include "resolve.h"

#include "probe.h"

cgi_py_api cgi_py;
static pthread_once_t py_once = PTHREAD_ONCE_INIT;

static void *cgi_py_sym(const char *name) { return cgi_probe_sym(RTLD_DEFAULT, name); }

static void cgi_py_lookup(void)
{
    /* Py_Version (PY_VERSION_HEX as data) exists from 3.11; older
     * interpreters keep the process-wide thread state, like 3.11. */
    const unsigned long *version = cgi_py_sym("Py_Version");
    cgi_py.version = version ? *version : 0;
    *(void **)&cgi_py.is_initialized = cgi_py_sym("Py_IsInitialized");
    *(void **)&cgi_py.this_thread_state = cgi_py_sym("PyGILState_GetThisThreadState");
    /* Public from 3.13; the underscored spelling (3.5-3.12) may be only a
     * macro after that. */
    *(void **)&cgi_py.unchecked_get = cgi_py_sym("PyThreadState_GetUnchecked");
    if (!cgi_py.unchecked_get) *(void **)&cgi_py.unchecked_get = cgi_py_sym("_PyThreadState_UncheckedGet");
    *(void **)&cgi_py.save = cgi_py_sym("PyEval_SaveThread");
    *(void **)&cgi_py.restore = cgi_py_sym("PyEval_RestoreThread");
    /* Looked up here, on a thread making a guarded call: the watchdog must
     * never take the loader's lock (a hang may be a thread holding it). */
    cgi_symbol_bounds("_PyRuntime", &cgi_py.runtime_lo, &cgi_py.runtime_hi);
    /* The frame reader's lookups too (dlsym, dladdr), for the same reason:
     * hang reports read a late call's Python line with it, GIL or not. */
    if (cgi_py.is_initialized) cgi_pyread_prepare();
    int st = CGI_PY_ABSENT;
    if (cgi_py.is_initialized && cgi_py.unchecked_get && cgi_py.save && cgi_py.restore) {
        /* 3.12 made the current thread state thread-local (_Py_tss_tstate);
         * before it, _PyThreadState_UncheckedGet() returns whichever thread
         * holds the GIL, and alone must not be trusted here. */
        if (cgi_py.version >= 0x030C0000)
            st = CGI_PY_PER_THREAD;
        else if (cgi_py.this_thread_state)
            st = CGI_PY_SHARED;
    }
    atomic_store_explicit(&cgi_py.state, st, memory_order_release);
}

int cgi_py_holds_slow(void)
{
    pthread_once(&py_once, cgi_py_lookup);
    return cgi_py_holds();
}

static int cgi_py_holds_cb(void) { return cgi_py_holds(); }

/* CPython keeps errno across PyEval_RestoreThread (take_gil saves and
 * restores it: Py_END_ALLOW_THREADS after a failed system call depends on
 * it), so fn's errno reaches the caller. */
static void cgi_py_call_outside(void (*fn)(void *), void *arg)
{
    void *ts = cgi_py.save();
    fn(arg);
    cgi_py.restore(ts);
}

const cg_adapter cgi_cpython_adapter = {"cpython", cgi_py_holds_cb, cgi_py_call_outside};

const cg_adapter *cg_adapter_cpython(void) { return &cgi_cpython_adapter; }

const cg_adapter *cgi_cpython_adapter_if_present(void)
{
    return cgi_py_sym("Py_IsInitialized") ? &cgi_cpython_adapter : NULL;
}
