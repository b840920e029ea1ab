/* The CPython adapter. No link dependency on libpython: the symbols are
 * looked up in the running process, once. holds() is false before
 * Py_Initialize and during finalization, where PyGILState_Check() alone
 * says 1 and PyEval_SaveThread() would abort the process. */
#define _GNU_SOURCE
#include "internal.h"

#include <dlfcn.h>

typedef struct cg_py {
    int (*is_initialized)(void);
    int (*is_finalizing)(void);
    int (*gil_check)(void);
    void *(*save)(void);
    void (*restore)(void *);
} cg_py;

static cg_py py;
static pthread_once_t py_once = PTHREAD_ONCE_INIT;
static int py_ok;

static void *cg_py_sym(const char *name) { return dlsym(RTLD_DEFAULT, name); }

static void cg_py_lookup(void)
{
    *(void **)&py.is_initialized = cg_py_sym("Py_IsInitialized");
    /* Public from 3.13; the underscored spelling before that. */
    *(void **)&py.is_finalizing = cg_py_sym("Py_IsFinalizing");
    if (!py.is_finalizing) *(void **)&py.is_finalizing = cg_py_sym("_Py_IsFinalizing");
    *(void **)&py.gil_check = cg_py_sym("PyGILState_Check");
    *(void **)&py.save = cg_py_sym("PyEval_SaveThread");
    *(void **)&py.restore = cg_py_sym("PyEval_RestoreThread");
    py_ok = py.is_initialized && py.is_finalizing && py.gil_check && py.save && py.restore;
}

static int cg_py_holds(void)
{
    pthread_once(&py_once, cg_py_lookup);
    return py_ok && py.is_initialized() && !py.is_finalizing() && py.gil_check();
}

static void cg_py_call_outside(void (*fn)(void *), void *arg)
{
    void *ts = py.save();
    fn(arg);
    py.restore(ts);
}

static const cg_adapter cg_cpython = {"cpython", cg_py_holds, cg_py_call_outside};

const cg_adapter *cg_adapter_cpython(void) { return &cg_cpython; }

const cg_adapter *cg_cpython_adapter_if_present(void)
{
    return cg_py_sym("Py_IsInitialized") ? &cg_cpython : NULL;
}
