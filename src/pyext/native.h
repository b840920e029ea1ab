/* What the files of callguard._native share. */
#ifndef CG_PY_NATIVE_H
#define CG_PY_NATIVE_H

#include <Python.h>

extern PyObject *error_type;            /* callguard.errors.Error */
extern PyObject *driver_error_type;     /* callguard.errors.DriverError */
extern PyObject *out_of_resources_type; /* callguard.errors.OutOfResources */

/* Raises callguard.errors.Error for a negative cg_status with
 * cg_last_error()'s message; returns NULL. */
PyObject *raise_status(int status);

/* results.c: a result code's name (a loaded layer's, else the package's
 * tables, else CUDA's loaded driver's), or NULL; the APIs whose tables the
 * package has, as "ze,cl,". */
const char *cg_py_result_name(const char *api, long result);
extern const char cg_py_result_tables[];

#ifdef CG_PY_LOAD_BINARY
/* load_binary.c */
PyObject *py_load_binary(PyObject *self, PyObject *args, PyObject *kw);
PyObject *py_load_stats(PyObject *self, PyObject *unused);
PyObject *py_cache_dir(PyObject *self, PyObject *unused);
#endif

#endif
