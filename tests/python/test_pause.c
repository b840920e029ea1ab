/* oneAPI.jl's GC-stall test, in CPython: a Python thread blocks for 1 s in a
 * driver call made through the toy layer while holding the GIL (as a naive
 * C extension does), and the main thread ticks every millisecond. Prints
 * the longest pause the main thread saw and checks it against argv[1]:
 *   stall    the pause is about the whole second (no adapter, or detect only)
 *   no-stall the pause is at most 50 ms (CALLGUARD_RUNTIME=cpython)
 * argv[2] is how many stalls the detector must have reported. Guarded calls
 * are also made before Py_Initialize and after Py_FinalizeEx, where the
 * adapter must not touch the interpreter, and the adapter's holds() is
 * checked there, with the GIL and without it: 1 only with the GIL. A
 * guarded call is made during finalization (module teardown), where
 * holds() is 0 on 3.12+ (Py_IsInitialized) and 1 on 3.11 and earlier (the
 * finalizing thread holds the GIL: python.h), and with the adapter on it
 * releases the GIL there: the process must still finalize cleanly. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <callguard/callguard.h>
#include <stdlib.h>
#include <string.h>
#include <toy.h>

#include "pause_script.h"

static PyObject *ext_wait(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned ms;
    if (!PyArg_ParseTuple(args, "I", &ms)) return NULL;
    toy_device_t d;
    toyGetDevice(0, &d);
    toyWait(d, ms); /* the GIL is held here, as a naive extension holds it */
    Py_RETURN_NONE;
}

static int held_at_finalization = -1, held_without_gil = -1;

/* holds() as the CPython adapter answers it here, and with the GIL let go. */
static PyObject *ext_holds(PyObject *self, PyObject *args)
{
    (void)self;
    int at_finalization = 0;
    if (!PyArg_ParseTuple(args, "|p", &at_finalization)) return NULL;
    int held = cg_adapter_cpython()->holds();
    if (at_finalization) held_at_finalization = held;
    Py_BEGIN_ALLOW_THREADS held_without_gil = cg_adapter_cpython()->holds();
    Py_END_ALLOW_THREADS return PyBool_FromLong(held);
}

static PyMethodDef ext_methods[] = {{"wait", ext_wait, METH_VARARGS, "wait in the toy driver"},
                                    {"holds", ext_holds, METH_VARARGS, "the adapter's holds()"},
                                    {NULL, NULL, 0, NULL}};
static struct PyModuleDef ext_module = {PyModuleDef_HEAD_INIT, "toyext", NULL, -1, ext_methods, NULL, NULL, NULL, NULL};
static PyObject *ext_init(void) { return PyModule_Create(&ext_module); }

static const char script[] =
    CG_PAUSE_TICKER("toyext") "assert toyext.holds(), 'holds() is 0 on the main thread with the GIL'\n"
                              "class Last:  # makes a guarded call while the interpreter finalizes\n"
                              "    def __del__(self, wait=toyext.wait, holds=toyext.holds):\n"
                              "        holds(True)\n"
                              "        wait(1)\n"
                              "last = Last()\n" CG_PAUSE_WRITE;

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s stall|no-stall STALLS OUTFILE\n", argv[0]);
        return 2;
    }
    cg_stats_enable(1);
    if (cg_adapter_cpython()->holds()) {
        fprintf(stderr, "holds() says 1 before Py_Initialize\n");
        return 1;
    }
    if (toyNop(1) != 1) return 3; /* before Py_Initialize */
    PyImport_AppendInittab("toyext", ext_init);
    Py_Initialize();
    char setup[600];
    snprintf(setup, sizeof setup, "OUT = %s\n", "__import__('sys').argv[0]");
    PyObject *main_dict = PyModule_GetDict(PyImport_AddModule("__main__"));
    PyObject *out = PyUnicode_FromString(argv[3]);
    PyDict_SetItemString(main_dict, "OUT", out);
    Py_DECREF(out);
    if (PyRun_SimpleString(script) != 0) return 4;
    if (Py_FinalizeEx() != 0) return 5;
    if (toyNop(2) != 2) return 6; /* after finalization */
    const int want_at_finalization = PY_VERSION_HEX >= 0x030C0000 ? 0 : 1;
    if (held_at_finalization != want_at_finalization || held_without_gil != 0 || cg_adapter_cpython()->holds()) {
        fprintf(stderr, "holds() said %d during finalization, %d without the GIL, %d after (expected %d, 0, 0)\n",
                held_at_finalization, held_without_gil, cg_adapter_cpython()->holds(), want_at_finalization);
        return 1;
    }

    FILE *f = fopen(argv[3], "r");
    double longest = -1;
    if (!f || fscanf(f, "%lf", &longest) != 1) return 7;
    fclose(f);
    cg_site_stats st;
    cg_get_stats("toyWait", &st);
    printf("longest pause %.1f ms, %lu stalls reported\n", longest, (unsigned long)st.stalls);
    int stall = strcmp(argv[1], "stall") == 0;
    if (stall && longest < 800) {
        fprintf(stderr, "expected the main thread to stall about 1 s, it paused at most %.1f ms\n", longest);
        return 1;
    }
    if (!stall && longest > 50) {
        fprintf(stderr, "expected pauses of at most 50 ms, saw %.1f ms\n", longest);
        return 1;
    }
    if (st.stalls != strtoul(argv[2], NULL, 10)) {
        fprintf(stderr, "expected %s stalls reported, got %lu\n", argv[2], (unsigned long)st.stalls);
        return 1;
    }
    return 0;
}
