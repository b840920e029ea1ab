/* The short paths with the CPython adapter active, in an embedded
 * interpreter whose main thread holds the GIL (as a C extension's function
 * has it): the lean path (no statistics) and the counted one that leaves
 * the GIL (statistics on). Each must leave the GIL around the driver call
 * and take it back, return the driver's result and errno to the caller,
 * count exactly (statistics on), and treat a call a driver callback makes
 * inside (with or without the GIL) as the general path does. A site whose
 * transition is `never` keeps the GIL. Prints "ok" at the end. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <callguard/callguard.h>
#include <errno.h>
#include <stdio.h>
#include <toy.h>

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, phase, #cond);                        \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static const char *phase = "start";

typedef struct inside {
    int gil_inside; /* PyGILState_Check() inside the driver call */
    int nested_ok;  /* the nested calls returned what they should */
    int retake;     /* take the GIL back inside and call again */
} inside;

static void TOY_APICALL callback(toy_device_t d, void *user)
{
    (void)d;
    inside *in = user;
    in->gil_inside = PyGILState_Check();
    errno = 0;
    int ok = toyNop(7) == 7 && toySetErrno(9, TOY_SUCCESS) == TOY_SUCCESS && errno == 9;
    if (in->retake) {
        /* A callback that takes the GIL itself, as a Python callback does:
         * its guarded call leaves it again, and it gets it back. */
        PyGILState_STATE g = PyGILState_Ensure();
        errno = 0;
        ok = ok && toySetErrno(11, TOY_ERROR_INVALID_VALUE) == TOY_ERROR_INVALID_VALUE && errno == 11;
        ok = ok && PyGILState_Check() == 1;
        PyGILState_Release(g);
    }
    in->nested_ok = ok;
}

static void calls(int stats)
{
    toy_device_t d = NULL;
    CHECK(toyGetDevice(0, &d) == TOY_SUCCESS);
    enum { N = 999 };
    static const toy_result_t results[] = {TOY_SUCCESS, TOY_ERROR_INVALID_VALUE, TOY_ERROR_TIMEOUT};
    CHECK(cg_reset_stats() == CG_OK);
    for (int i = 0; i < N; i++) {
        errno = 0;
        CHECK(toySetErrno(100 + i, results[i % 3]) == results[i % 3]);
        CHECK(errno == 100 + i);
        CHECK(PyGILState_Check() == 1);
    }
    /* Twice: the first call of a site resolves it on the general path. */
    inside in;
    for (int k = 0; k < 2; k++) {
        in = (inside){.gil_inside = -1, .retake = 1};
        CHECK(toyRunCallback(d, callback, &in) == TOY_SUCCESS);
        CHECK(in.gil_inside == 0); /* left around the driver call */
        CHECK(in.nested_ok == 1);
        CHECK(PyGILState_Check() == 1);
    }

    /* transition never: the GIL is kept. */
    CHECK(cg_set_transition("toyRunCallback", CG_TRANSITION_NEVER) == CG_OK);
    in = (inside){.gil_inside = -1};
    CHECK(toyRunCallback(d, callback, &in) == TOY_SUCCESS);
    CHECK(in.gil_inside == 1);
    CHECK(in.nested_ok == 1);
    CHECK(cg_set_transition("toyRunCallback", CG_TRANSITION_ALWAYS) == CG_OK);

    if (!stats) return;
    cg_site_stats s;
    CHECK(cg_get_stats("toySetErrno", &s) == CG_OK);
    /* N on the main thread, 2 + 2 + 1 nested from the callbacks. */
    CHECK(s.calls == N + 5 && s.nested == 5);
    CHECK(s.errors == N / 3 + 2 && s.states == N / 3);
    CHECK(cg_get_stats("toyRunCallback", &s) == CG_OK);
    CHECK(s.calls == 3 && s.nested == 0 && s.stalls == 0);
    CHECK(cg_get_stats("toyNop", &s) == CG_OK);
    CHECK(s.calls == 3 && s.nested == 3);
}

int main(void)
{
    Py_InitializeEx(0);
    CHECK(cg_set_runtime("cpython") == CG_OK);
    phase = "lean (no statistics)";
    CHECK(cg_stats_enable(0) == CG_OK);
    calls(0);
    phase = "counted, leaving the GIL";
    CHECK(cg_stats_enable(1) == CG_OK);
    calls(1);
    Py_FinalizeEx();
    printf("ok\n");
    return 0;
}
