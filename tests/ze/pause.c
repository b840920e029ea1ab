/* oneAPI.jl's GC-stall test (PR #704), in CPython, on the real loader: a
 * Python thread blocks for 1 s in zeEventHostSynchronize on an event nobody
 * signals, made through libcallguard_ze.so from a builtin extension that
 * holds the GIL (as a naive C extension does), while the main thread ticks
 * every millisecond. Prints the longest pause the main thread saw and checks
 * it against argv[1]:
 *   stall     about the whole second (CALLGUARD_RUNTIME=none)
 *   no-stall  at most 50 ms (CALLGUARD_RUNTIME=cpython)
 * argv[2] is a scratch file. The simulator is opened before Py_Initialize
 * and closed after Py_FinalizeEx: guarded calls the adapter must leave alone. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ze_util.h"
#include "../python/pause_script.h"

#include <callguard/callguard.h>
#include <time.h>

static ze_sim sim;
static ze_event_handle_t event;
static ze_result_t wait_result = ZE_RESULT_SUCCESS;
static double wait_ms;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static PyObject *ext_wait(PyObject *self, PyObject *args)
{
    (void)self;
    unsigned ms;
    if (!PyArg_ParseTuple(args, "I", &ms)) return NULL;
    double t0 = now_ms();
    wait_result = zeEventHostSynchronize(event, (uint64_t)ms * 1000000u); /* the GIL is held here */
    wait_ms = now_ms() - t0;
    Py_RETURN_NONE;
}

static PyMethodDef ext_methods[] = {{"wait", ext_wait, METH_VARARGS, "wait on an unsignalled event"},
                                    {NULL, NULL, 0, NULL}};
static struct PyModuleDef ext_module = {PyModuleDef_HEAD_INIT, "zeext", NULL, -1, ext_methods, NULL, NULL, NULL, NULL};
static PyObject *ext_init(void) { return PyModule_Create(&ext_module); }

static const char script[] = CG_PAUSE_TICKER("zeext") CG_PAUSE_WRITE;

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "stall") != 0 && strcmp(argv[1], "no-stall") != 0)) {
        fprintf(stderr, "usage: %s stall|no-stall OUTFILE\n", argv[0]);
        return 2;
    }
    cg_stats_enable(1);
    sim = ze_sim_open(); /* before Py_Initialize */
    ze_event_pool_desc_t pd = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1};
    ze_event_pool_handle_t pool;
    ZE_OK(zeEventPoolCreate(sim.context, &pd, 1, &sim.device, &pool));
    ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 0, .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ZE_OK(zeEventCreate(pool, &ed, &event));

    PyImport_AppendInittab("zeext", ext_init);
    Py_Initialize();
    PyObject *main_dict = PyModule_GetDict(PyImport_AddModule("__main__"));
    PyObject *out = PyUnicode_FromString(argv[2]);
    PyDict_SetItemString(main_dict, "OUT", out);
    Py_DECREF(out);
    if (PyRun_SimpleString(script) != 0) return 4;
    if (Py_FinalizeEx() != 0) return 5;

    ZE_OK(zeEventDestroy(event)); /* after finalization */
    ZE_OK(zeEventPoolDestroy(pool));
    ZE_OK(zeContextDestroy(sim.context));

    FILE *f = fopen(argv[2], "r");
    double longest = -1;
    if (!f || fscanf(f, "%lf", &longest) != 1) return 7;
    fclose(f);
    cg_site_stats st = {0};
    cg_get_stats("zeEventHostSynchronize", &st);
    printf("longest pause %.1f ms; zeEventHostSynchronize returned 0x%x after %.1f ms, %lu call(s) guarded\n", longest,
           (unsigned)wait_result, wait_ms, (unsigned long)st.calls);
    if (wait_result != ZE_RESULT_NOT_READY || wait_ms < 900 || st.calls != 1) {
        fprintf(stderr, "expected one guarded 1 s wait that times out with ZE_RESULT_NOT_READY\n");
        return 1;
    }
    if (strcmp(argv[1], "stall") == 0 && longest < 800) {
        fprintf(stderr, "expected the main thread to stall about 1 s, it paused at most %.1f ms\n", longest);
        return 1;
    }
    if (strcmp(argv[1], "no-stall") == 0 && longest > 50) {
        fprintf(stderr, "expected pauses of at most 50 ms, saw %.1f ms\n", longest);
        return 1;
    }
    return 0;
}
