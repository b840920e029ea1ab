/* The CPython adapter. No link dependency on libpython: the symbols are
 * looked up in the running process, once. holds() is false before
 * Py_Initialize and during finalization, where PyGILState_Check() alone
 * says 1 and PyEval_SaveThread() would abort the process.
 *
 * cg_call() recognizes this adapter and calls cgi_py_holds() and
 * PyEval_SaveThread/RestoreThread itself, without the generic callback
 * hops: leaving the GIL is the whole point of the call there. */
#define _GNU_SOURCE
#include "python.h"


#include <dlfcn.h>

cgi_py_api cgi_py;
static pthread_once_t py_once = PTHREAD_ONCE_INIT;

static void *cgi_py_sym(const char *name) { return dlsym(RTLD_DEFAULT, name); }

static void cgi_py_lookup(void)
{
    *(void **)&cgi_py.is_initialized = cgi_py_sym("Py_IsInitialized");
    /* Public from 3.13; the underscored spelling before that. */
    *(void **)&cgi_py.is_finalizing = cgi_py_sym("Py_IsFinalizing");
    if (!cgi_py.is_finalizing) *(void **)&cgi_py.is_finalizing = cgi_py_sym("_Py_IsFinalizing");
    *(void **)&cgi_py.gil_check = cgi_py_sym("PyGILState_Check");
    *(void **)&cgi_py.save = cgi_py_sym("PyEval_SaveThread");
    *(void **)&cgi_py.restore = cgi_py_sym("PyEval_RestoreThread");
    int ok = cgi_py.is_initialized && cgi_py.is_finalizing && cgi_py.gil_check && cgi_py.save && cgi_py.restore;
    atomic_store_explicit(&cgi_py.state, ok ? 1 : -1, memory_order_release);
}

int cgi_py_holds_slow(void)
{
    pthread_once(&py_once, cgi_py_lookup);
    return cgi_py_holds();
}

static int cgi_py_holds_cb(void) { return cgi_py_holds(); }

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
