/* The names of result codes, for result_name() and load_binary's errors:
 * what the loaded layers say (cg_result_name), else the package's own
 * tables made from the API headers it was built with (Level Zero, OpenCL:
 * so result_name answers outside `callguard run` too), else, for CUDA, the
 * loaded driver's cuGetErrorName. */
#define _GNU_SOURCE
#include "native.h"
#if __has_include(<level_zero/ze_api.h>)
#include <level_zero/ze_api.h>
#include "ze_results.h"
#endif
#if __has_include(<CL/cl.h>)
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include "cl_results.h"
#endif

#include <callguard/callguard.h>

#include <dlfcn.h>
#include <string.h>

const char cg_py_result_tables[] = ""
#ifdef CG_PY_ZE_RESULTS
                                   "ze,"
#endif
#ifdef CG_PY_CL_RESULTS
                                   "cl,"
#endif
    ;

/* CUDA names its own results (cuGetErrorName): no table here, cuda.h is the
 * toolkit's and no build dependency. The loaded libcuda.so.1 (the driver, or
 * callguard's shim under `callguard run`), never one loaded for this; its
 * strings are static. */
static const char *cuda_result_name(long result)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    int (*get_name)(int, const char **) =
        (int (*)(int, const char **))dlsym(lib ? lib : RTLD_DEFAULT, "cuGetErrorName");
    if (!lib || !get_name) (void)dlerror(); /* a failed lookup's message is not the program's */
    const char *name = NULL;
    if (!get_name || get_name((int)result, &name) != 0) name = NULL;
    if (lib) dlclose(lib);
    return name;
}

const char *cg_py_result_name(const char *api, long result)
{
    const char *name = cg_result_name(api, result);
    if (name) return name;
    if (!strcmp(api, "cuda")) return cuda_result_name(result);
#define CG_PY_NAME(n)                                                                                                  \
    if (result == (long)(n)) return #n;
#ifdef CG_PY_ZE_RESULTS
    if (!strcmp(api, "ze")) {
        CG_PY_ZE_RESULTS(CG_PY_NAME)
    }
#endif
#ifdef CG_PY_CL_RESULTS
    if (!strcmp(api, "cl")) {
        CG_PY_CL_RESULTS(CG_PY_NAME)
    }
#endif
#undef CG_PY_NAME
    return NULL;
}
