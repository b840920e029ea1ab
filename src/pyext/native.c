/* callguard._native: libcallguard's C API for Python (python/callguard wraps
 * it; docs/python.md). Built against the limited API (Py_LIMITED_API is
 * 3.9, set by src/pyext/CMakeLists.txt), so one binary serves every
 * CPython from 3.9 on.
 *
 * A failed call raises callguard.errors.Error carrying the cg_status and
 * its name with cg_last_error()'s message. Calls that may touch files or
 * wait on callguard's locks run with the GIL released: cg_last_error() is
 * per OS thread, and the thread stays the same across the release. */
#include "native.h"

#include <callguard/callguard.h>

#include <string.h>

PyObject *error_type;            /* callguard.errors.Error */
PyObject *driver_error_type;     /* callguard.errors.DriverError */
PyObject *out_of_resources_type; /* callguard.errors.OutOfResources */

PyObject *raise_status(int status)
{
    const char *message = cg_last_error();
    PyObject *exc = PyObject_CallFunction(error_type, "sis", message && *message ? message : cg_status_name(status),
                                          status, cg_status_name(status));
    if (exc) {
        PyErr_SetObject(error_type, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

/* None for CG_OK, True for CG_PENDING (kept until its layer loads). */
static PyObject *status_result(int status)
{
    if (status < 0) return raise_status(status);
    if (status == CG_PENDING) Py_RETURN_TRUE;
    Py_RETURN_NONE;
}

static int parse_scope(const char *name, cg_scope *out)
{
    if (!name || !strcmp(name, "process")) return *out = CG_SCOPE_PROCESS, 0;
    if (!strcmp(name, "handle")) return *out = CG_SCOPE_HANDLE, 0;
    if (!strcmp(name, "once")) return *out = CG_SCOPE_ONCE, 0;
    if (!strcmp(name, "shared")) return *out = CG_SCOPE_SHARED, 0;
    PyErr_Format(PyExc_ValueError, "scope '%s': expected 'process', 'handle', 'once' or 'shared'", name);
    return -1;
}

static const char *scope_name(cg_scope scope)
{
    return scope == CG_SCOPE_HANDLE   ? "handle"
           : scope == CG_SCOPE_ONCE   ? "once"
           : scope == CG_SCOPE_SHARED ? "shared"
                                      : "process";
}

static int parse_transition(const char *name, cg_transition *out)
{
    if (!strcmp(name, "always")) return *out = CG_TRANSITION_ALWAYS, 0;
    if (!strcmp(name, "blocking")) return *out = CG_TRANSITION_BLOCKING, 0;
    if (!strcmp(name, "never")) return *out = CG_TRANSITION_NEVER, 0;
    PyErr_Format(PyExc_ValueError, "transition '%s': expected 'always', 'blocking' or 'never'", name);
    return -1;
}

static const char *transition_name(cg_transition t)
{
    return t == CG_TRANSITION_BLOCKING ? "blocking" : t == CG_TRANSITION_NEVER ? "never" : "always";
}

static int parse_format(const char *name, cg_report_format *out)
{
    if (!strcmp(name, "json")) return *out = CG_REPORT_JSON, 0;
    if (!strcmp(name, "text")) return *out = CG_REPORT_TEXT, 0;
    PyErr_Format(PyExc_ValueError, "report format '%s': expected 'json' or 'text'", name);
    return -1;
}

/* ---- policies -------------------------------------------------------------------- */

static PyObject *py_serialize(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"site", "domain", "scope", NULL};
    const char *site, *domain = NULL, *scope_s = "process";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|zs", names, &site, &domain, &scope_s)) return NULL;
    cg_scope scope;
    if (parse_scope(scope_s, &scope) < 0) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cg_serialize(site, domain, scope);
    Py_END_ALLOW_THREADS return status_result(rc);
}

static PyObject *py_set_transition(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"site", "transition", NULL};
    const char *site, *name;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "zs", names, &site, &name)) return NULL;
    cg_transition t;
    if (parse_transition(name, &t) < 0) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cg_set_transition(site, t);
    Py_END_ALLOW_THREADS return status_result(rc);
}

static PyObject *py_set_blocking(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"site", "blocking", "reason", NULL};
    const char *site, *reason = NULL;
    int blocking;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sp|z", names, &site, &blocking, &reason)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cg_set_blocking(site, blocking, reason);
    Py_END_ALLOW_THREADS return status_result(rc);
}

static PyObject *py_configure(PyObject *self, PyObject *args)
{
    (void)self;
    const char *variable, *value;
    if (!PyArg_ParseTuple(args, "ss", &variable, &value)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cg_configure(variable, value);
    Py_END_ALLOW_THREADS return status_result(rc);
}

static PyObject *py_policy_load(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cg_policy_load(path);
    Py_END_ALLOW_THREADS return status_result(rc);
}

static PyObject *py_set_runtime(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
    return status_result(cg_set_runtime(name));
}

static PyObject *py_set_stall_ms(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned long ms;
    if (!PyArg_ParseTuple(args, "k", &ms)) return NULL;
    if (ms > UINT32_MAX) return PyErr_Format(PyExc_ValueError, "stall_ms %lu: expected 0..%u", ms, UINT32_MAX);
    return status_result(cg_set_stall_ms((uint32_t)ms));
}

/* ---- statistics and the report ---------------------------------------------------------- */

static PyObject *py_stats_enable(PyObject *self, PyObject *args)
{
    (void)self;
    int on = 1;
    if (!PyArg_ParseTuple(args, "|p", &on)) return NULL;
    return status_result(cg_stats_enable(on));
}

static PyObject *py_get_stats(PyObject *self, PyObject *args)
{
    (void)self;
    const char *site;
    if (!PyArg_ParseTuple(args, "s", &site)) return NULL;
    cg_site_stats s;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cg_get_stats(site, &s);
    Py_END_ALLOW_THREADS if (rc < 0) return raise_status(rc);
    return Py_BuildValue("{sKsKsKsKsKsKsKsKsKsIsI}", "calls", (unsigned long long)s.calls, "nested",
                         (unsigned long long)s.nested, "errors", (unsigned long long)s.errors, "total_ns",
                         (unsigned long long)s.total_ns, "max_ns", (unsigned long long)s.max_ns, "lock_wait_ns",
                         (unsigned long long)s.lock_wait_ns, "stalls", (unsigned long long)s.stalls, "stall_ns",
                         (unsigned long long)s.stall_ns, "states", (unsigned long long)s.states, "peak_inside",
                         (unsigned int)s.peak_inside, "peak_waiting", (unsigned int)s.peak_waiting);
}

static PyObject *py_reset_stats(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return status_result(cg_reset_stats());
}

static PyObject *py_report_write(PyObject *self, PyObject *args)
{
    (void)self;
    const char *path, *format_s = "json";
    if (!PyArg_ParseTuple(args, "s|s", &path, &format_s)) return NULL;
    cg_report_format format;
    if (parse_format(format_s, &format) < 0) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cg_report_write(path, format);
    Py_END_ALLOW_THREADS return status_result(rc);
}

static PyObject *py_report_convert(PyObject *self, PyObject *args)
{
    (void)self;
    const char *json_path, *path, *format_s = "json";
    if (!PyArg_ParseTuple(args, "ss|s", &json_path, &path, &format_s)) return NULL;
    cg_report_format format;
    if (parse_format(format_s, &format) < 0) return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = cg_report_convert(json_path, path, format);
    Py_END_ALLOW_THREADS return status_result(rc);
}

/* ---- what is loaded ------------------------------------------------------------------ */

static int set_str(PyObject *d, const char *key, const char *value)
{
    PyObject *v = value ? PyUnicode_DecodeFSDefault(value) : (Py_INCREF(Py_None), Py_None);
    if (!v) return -1;
    int rc = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return rc;
}

static int set_long(PyObject *d, const char *key, long value)
{
    PyObject *v = PyLong_FromLong(value);
    if (!v) return -1;
    int rc = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return rc;
}

static int set_bool(PyObject *d, const char *key, int value)
{
    return PyDict_SetItemString(d, key, value ? Py_True : Py_False);
}

static PyObject *py_list_sites(PyObject *self, PyObject *args)
{
    (void)self;
    const char *api = NULL;
    if (!PyArg_ParseTuple(args, "|z", &api)) return NULL;
    long n = cg_list_sites(api, NULL, 0);
    if (n < 0) return raise_status((int)n);
    cg_site_info *v = PyMem_Calloc((size_t)n + 1, sizeof *v);
    if (!v) return PyErr_NoMemory();
    n = cg_list_sites(api, v, (size_t)n);
    PyObject *list = PyList_New(0);
    for (long i = 0; list && i < n; i++) {
        PyObject *d = PyDict_New();
        if (!d || set_str(d, "api", v[i].api) || set_str(d, "name", v[i].name) ||
            set_str(d, "variant_of", v[i].variant_of) || set_str(d, "transition", transition_name(v[i].transition)) ||
            set_bool(d, "blocking", v[i].blocking) || set_str(d, "reason", v[i].reason) ||
            set_str(d, "domain", v[i].domain) || set_str(d, "scope", scope_name(v[i].scope)) ||
            PyList_Append(list, d)) {
            Py_XDECREF(d);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(d);
    }
    PyMem_Free(v);
    return list;
}

static PyObject *py_list_layers(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    long n = cg_list_layers(NULL, 0);
    if (n < 0) return raise_status((int)n);
    cg_layer_info *v = PyMem_Calloc((size_t)n + 1, sizeof *v);
    if (!v) return PyErr_NoMemory();
    n = cg_list_layers(v, (size_t)n);
    PyObject *list = PyList_New(0);
    for (long i = 0; list && i < n; i++) {
        PyObject *d = PyDict_New();
        if (!d || set_str(d, "api", v[i].api) || set_str(d, "prefixes", v[i].prefixes) ||
            set_str(d, "soname", v[i].soname) || set_str(d, "library_env", v[i].library_env) ||
            set_str(d, "library_path", v[i].library_path) || set_str(d, "header", v[i].header) ||
            set_str(d, "path", v[i].path) || set_bool(d, "shim", v[i].shim) ||
            set_long(d, "nsites", (long)v[i].nsites) || PyList_Append(list, d)) {
            Py_XDECREF(d);
            Py_CLEAR(list);
            break;
        }
        Py_DECREF(d);
    }
    PyMem_Free(v);
    return list;
}

static PyObject *py_result_name(PyObject *self, PyObject *args)
{
    (void)self;
    const char *api;
    long result;
    if (!PyArg_ParseTuple(args, "sl", &api, &result)) return NULL;
    const char *name = cg_py_result_name(api, result);
    if (!name) Py_RETURN_NONE;
    return PyUnicode_FromString(name);
}

static PyObject *py_status_name(PyObject *self, PyObject *args)
{
    (void)self;
    int status;
    if (!PyArg_ParseTuple(args, "i", &status)) return NULL;
    return PyUnicode_FromString(cg_status_name(status));
}

/* ---- the module ------------------------------------------------------------------------ */

static PyMethodDef methods[] = {
    {"serialize", (PyCFunction)(void (*)(void))py_serialize, METH_VARARGS | METH_KEYWORDS,
     "serialize(site, domain=None, scope='process'): cg_serialize"},
    {"set_transition", (PyCFunction)(void (*)(void))py_set_transition, METH_VARARGS | METH_KEYWORDS,
     "set_transition(site or None, 'always'|'blocking'|'never'): cg_set_transition"},
    {"set_blocking", (PyCFunction)(void (*)(void))py_set_blocking, METH_VARARGS | METH_KEYWORDS,
     "set_blocking(site, blocking, reason=None): cg_set_blocking"},
    {"configure", py_configure, METH_VARARGS, "configure(variable, value): cg_configure"},
    {"policy_load", py_policy_load, METH_VARARGS, "policy_load(path): cg_policy_load"},
    {"set_runtime", py_set_runtime, METH_VARARGS,
     "set_runtime('none'|'auto'|'release'|'cpython'|'julia'): cg_set_runtime"},
    {"set_stall_ms", py_set_stall_ms, METH_VARARGS, "set_stall_ms(ms): cg_set_stall_ms"},
    {"stats_enable", py_stats_enable, METH_VARARGS, "stats_enable(on=True): cg_stats_enable"},
    {"get_stats", py_get_stats, METH_VARARGS, "get_stats(site) -> dict: cg_get_stats"},
    {"reset_stats", py_reset_stats, METH_NOARGS, "reset_stats(): cg_reset_stats"},
    {"report_write", py_report_write, METH_VARARGS, "report_write(path, 'json'|'text'): cg_report_write"},
    {"report_convert", py_report_convert, METH_VARARGS,
     "report_convert(json_path, path, 'json'|'text'): cg_report_convert"},
    {"list_sites", py_list_sites, METH_VARARGS, "list_sites(api=None) -> [dict]: cg_list_sites"},
    {"list_layers", py_list_layers, METH_NOARGS, "list_layers() -> [dict]: cg_list_layers"},
    {"result_name", py_result_name, METH_VARARGS,
     "result_name(api, result) -> str or None: cg_result_name, else results.c's tables"},
    {"status_name", py_status_name, METH_VARARGS, "status_name(status) -> str: cg_status_name"},
#ifdef CG_PY_LOAD_BINARY
    {"load_binary", (PyCFunction)(void (*)(void))py_load_binary, METH_VARARGS | METH_KEYWORDS,
     "load_binary(...): cg_load_binary (callguard.load_binary wraps it)"},
    {"load_stats", py_load_stats, METH_NOARGS, "load_stats() -> dict: cg_load_get_stats"},
    {"cache_dir", py_cache_dir, METH_NOARGS, "cache_dir() -> str: cg_load_cache_dir"},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "callguard._native",
    "libcallguard's C API (see the callguard package)",
    -1,
    methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__native(void)
{
    PyObject *errors = PyImport_ImportModule("callguard.errors");
    if (!errors) return NULL;
    error_type = PyObject_GetAttrString(errors, "Error");
    driver_error_type = PyObject_GetAttrString(errors, "DriverError");
    out_of_resources_type = PyObject_GetAttrString(errors, "OutOfResources");
    Py_DECREF(errors);
    if (!error_type || !driver_error_type || !out_of_resources_type) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
#ifdef CG_PY_LOAD_BINARY
    int have_load = 1;
#else
    int have_load = 0;
#endif
    if (PyModule_AddStringConstant(m, "VERSION", CALLGUARD_VERSION) < 0 ||
        PyModule_AddIntConstant(m, "HAVE_LOAD_BINARY", have_load) < 0 ||
        PyModule_AddStringConstant(m, "RESULT_TABLES", cg_py_result_tables) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
