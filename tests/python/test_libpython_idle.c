/* A process with libpython mapped that never runs Python (linked against
 * it, Py_Initialize never called): a guarded call that hangs is on the hang
 * page with no Python line and no GIL held, and nothing faults. The
 * watchdog's frame and GIL readers find CPython's symbols there but no
 * interpreter: unknown, never a guess (issue 35, item 4). Prints "ok". */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <callguard/callguard.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <toy.h>

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                   \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    CHECK(!Py_IsInitialized()); /* libpython is mapped: this is its function */
    CHECK(cg_configure("CALLGUARD_HANG_MS", "100") == CG_OK);
    CHECK(cg_stats_enable(1) == CG_OK);
    toy_device_t d = NULL;
    CHECK(toyGetDevice(0, &d) == TOY_SUCCESS);
    CHECK(toyWait(d, 500) == TOY_SUCCESS); /* a hang of 500 ms: the page is written at 100 */
    CHECK(cg_report_write(argv[1], CG_REPORT_JSON) == CG_OK);
    FILE *f = fopen(argv[1], "r");
    CHECK(f);
    static char json[1 << 20];
    size_t n = fread(json, 1, sizeof json - 1, f);
    fclose(f);
    json[n] = '\0';
    const char *hang = strstr(json, "\"hang\": {");
    CHECK(hang && strstr(hang, "\"name\": \"toyWait\""));
    CHECK(strstr(hang, "\"python\": null") && !strstr(hang, "\"holds_runtime\": true"));
    puts("ok");
    return 0;
}
