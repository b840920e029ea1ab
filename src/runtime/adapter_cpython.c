/* The CPython adapter. No link dependency on libpython: the symbols are
 * looked up in the running process, once. holds() is false before
 * Py_Initialize and during finalization, where PyGILState_Check() alone
 * says 1 and PyEval_SaveThread() would abort the process.
 *
 * cg_call() recognizes this adapter and calls cg_py_holds() and
 * PyEval_SaveThread/RestoreThread itself, without the generic callback
 * hops: leaving the GIL is the whole point of the call there. */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>

cg_py_api cg_py;
static pthread_once_t py_once = PTHREAD_ONCE_INIT;

static void *cg_py_sym(const char *name) { return dlsym(RTLD_DEFAULT, name); }

static void cg_py_lookup(void)
{
    *(void **)&cg_py.is_initialized = cg_py_sym("Py_IsInitialized");
    /* Public from 3.13; the underscored spelling before that. */
    *(void **)&cg_py.is_finalizing = cg_py_sym("Py_IsFinalizing");
    if (!cg_py.is_finalizing) *(void **)&cg_py.is_finalizing = cg_py_sym("_Py_IsFinalizing");
    *(void **)&cg_py.gil_check = cg_py_sym("PyGILState_Check");
    *(void **)&cg_py.save = cg_py_sym("PyEval_SaveThread");
    *(void **)&cg_py.restore = cg_py_sym("PyEval_RestoreThread");
    int ok = cg_py.is_initialized && cg_py.is_finalizing && cg_py.gil_check && cg_py.save && cg_py.restore;
    atomic_store_explicit(&cg_py.state, ok ? 1 : -1, memory_order_release);
}

int cg_py_holds_slow(void)
{
    pthread_once(&py_once, cg_py_lookup);
    return cg_py_holds();
}

static int cg_py_holds_cb(void) { return cg_py_holds(); }

static void cg_py_call_outside(void (*fn)(void *), void *arg)
{
    void *ts = cg_py.save();
    fn(arg);
    cg_py.restore(ts);
}

const cg_adapter cg_cpython_adapter = {"cpython", cg_py_holds_cb, cg_py_call_outside};

const cg_adapter *cg_adapter_cpython(void) { return &cg_cpython_adapter; }

const cg_adapter *cg_cpython_adapter_if_present(void)
{
    return cg_py_sym("Py_IsInitialized") ? &cg_cpython_adapter : NULL;
}
