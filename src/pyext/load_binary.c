/* callguard._native.load_binary: cg_load_binary (include/callguard/
 * load.h) for Python, the way Triton calls its backends' load_binary.
 * Every driver call, the Level Zero device enumeration included, runs with
 * the GIL released: 16 threads of a ThreadPoolExecutor compile at once, and
 * callguard's policies (serialize zeModuleCreate...) are what orders them.
 *
 * Triton names a device by its number. For Level Zero, device numbers are
 * the devices of every driver in zeDriverGet's order, each with one context
 * per driver made here once and kept for the process (modules outlive any
 * call). The names are looked up as libcallguard-load does: in the
 * process's global scope (a preloaded callguard layer), else in the loader
 * opened by soname (under `callguard run`, callguard's shim). */
#define _GNU_SOURCE
#include "native.h"

#include <callguard/callguard.h>
#include <callguard/load.h>

#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Level Zero devices by number ------------------------------------------------------ */

typedef struct {
    ze_context_handle_t context;
    ze_device_handle_t device;
} ze_slot;

static pthread_mutex_t ze_lock = PTHREAD_MUTEX_INITIALIZER;
static int ze_done;       /* enumerated (successfully or not) */
static ze_slot *ze_slots; /* every device of every driver */
static uint32_t ze_nslots;
static char ze_error[256]; /* why enumeration failed ("" if it did not) */
static long ze_error_result;
static const char *ze_error_call;

static void *ze_sym(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    if (f) return f;
    static void *loader;
    if (!loader) loader = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_GLOBAL);
    f = loader ? dlsym(loader, name) : NULL;
    if (!f) (void)dlerror(); /* a failed lookup's message is not the program's */
    return f;
}

static const char *api_name(cg_load_api api);
static const char *result_name(cg_load_api api, long result);

static int ze_fail(const char *call, long result)
{
    ze_error_call = call;
    ze_error_result = result;
    const char *name = result_name(CG_LOAD_API_ZE, result);
    snprintf(ze_error, sizeof ze_error, "%s failed: %s (0x%lx) while finding the Level Zero devices", call,
             name ? name : "unknown result", (unsigned long)result);
    return -1;
}

/* Called with ze_lock held and the GIL released. */
static int ze_enumerate(void)
{
    __typeof__(zeInit) *init = ze_sym("zeInit");
    __typeof__(zeDriverGet) *driver_get = ze_sym("zeDriverGet");
    __typeof__(zeDeviceGet) *device_get = ze_sym("zeDeviceGet");
    __typeof__(zeContextCreate) *context_create = ze_sym("zeContextCreate");
    if (!init || !driver_get || !device_get || !context_create) {
        snprintf(ze_error, sizeof ze_error,
                 "no Level Zero loader: libze_loader.so.1 cannot be opened or lacks zeInit (Debian package libze1)");
        return -1;
    }
    ze_result_t r = init(0);
    if (r != ZE_RESULT_SUCCESS) return ze_fail("zeInit", r);
    uint32_t ndrivers = 0;
    if ((r = driver_get(&ndrivers, NULL)) != ZE_RESULT_SUCCESS) return ze_fail("zeDriverGet", r);
    ze_driver_handle_t *drivers = calloc(ndrivers + 1, sizeof *drivers);
    if (!drivers) return ze_fail("calloc", ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    if ((r = driver_get(&ndrivers, drivers)) != ZE_RESULT_SUCCESS) return free(drivers), ze_fail("zeDriverGet", r);
    for (uint32_t d = 0; d < ndrivers; d++) {
        uint32_t n = 0;
        if ((r = device_get(drivers[d], &n, NULL)) != ZE_RESULT_SUCCESS || !n) continue;
        ze_slot *more = realloc(ze_slots, (ze_nslots + n) * sizeof *more);
        ze_device_handle_t *devices = calloc(n, sizeof *devices);
        if (!more || !devices) {
            free(devices), free(drivers);
            if (more) ze_slots = more;
            return ze_fail("realloc", ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
        }
        ze_slots = more;
        if ((r = device_get(drivers[d], &n, devices)) != ZE_RESULT_SUCCESS) {
            free(devices);
            continue;
        }
        ze_context_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
        ze_context_handle_t context = NULL;
        if ((r = context_create(drivers[d], &desc, &context)) != ZE_RESULT_SUCCESS) {
            free(devices), free(drivers);
            return ze_fail("zeContextCreate", r);
        }
        for (uint32_t i = 0; i < n; i++)
            ze_slots[ze_nslots++] = (ze_slot){context, devices[i]};
        free(devices);
    }
    free(drivers);
    return 0;
}

/* The context and device of Level Zero device number `index`; GIL released. */
static int ze_device(long index, void **context, void **device, char *why, size_t why_size)
{
    pthread_mutex_lock(&ze_lock);
    if (!ze_done) {
        ze_enumerate();
        ze_done = 1;
    }
    int rc = 0;
    if (ze_error[0]) {
        snprintf(why, why_size, "%s", ze_error);
        rc = -1;
    } else if (index < 0 || (unsigned long)index >= ze_nslots) {
        snprintf(why, why_size, "Level Zero device %ld: expected 0..%ld (%u device%s found)", index,
                 (long)ze_nslots - 1, ze_nslots, ze_nslots == 1 ? "" : "s");
        rc = -2;
    } else {
        *context = ze_slots[index].context;
        *device = ze_slots[index].device;
    }
    pthread_mutex_unlock(&ze_lock);
    return rc;
}

/* ---- errors ------------------------------------------------------------------------------ */

static const char *api_name(cg_load_api api)
{
    return api == CG_LOAD_API_ZE ? "ze" : api == CG_LOAD_API_CL ? "cl" : api == CG_LOAD_API_CUDA ? "cuda" : "?";
}

/* A result code's name (results.c). */
static const char *result_name(cg_load_api api, long result) { return cg_py_result_name(api_name(api), result); }

/* Raises DriverError (OutOfResources for CG_LOAD_ERESOURCES) or Error; NULL. */
static PyObject *raise_load(int rc, cg_load_api api, const char *message, const char *call, long result,
                            const char *log, int out_of_resources)
{
    int driver = rc == CG_LOAD_EDRIVER || rc == CG_LOAD_ERESOURCES || out_of_resources;
    PyObject *type = !driver                                          ? error_type
                     : (rc == CG_LOAD_ERESOURCES || out_of_resources) ? out_of_resources_type
                                                                      : driver_error_type;
    const char *name = call && driver ? result_name(api, result) : NULL;
    PyObject *args =
        Py_BuildValue("(sis)", message && *message ? message : cg_load_status_name(rc), rc, cg_load_status_name(rc));
    PyObject *kw = driver ? Py_BuildValue("{ssszslszss}", "api", api_name(api), "function", call, "result", result,
                                          "result_name", name, "build_log", log ? log : "")
                          : NULL;
    if (args && (kw || !driver)) {
        PyObject *exc = PyObject_Call(type, args, kw);
        if (exc) {
            PyErr_SetObject(type, exc);
            Py_DECREF(exc);
        }
    }
    Py_XDECREF(args);
    Py_XDECREF(kw);
    return NULL;
}

/* ---- load_binary ---------------------------------------------------------------------------- */

static void *as_handle(PyObject *o, const char *what, int *bad)
{
    if (o == Py_None) return NULL;
    void *p = PyLong_AsVoidPtr(o);
    if (!p && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s: expected a handle (an int address), not %R", what, o);
        *bad = 1;
    }
    return p;
}

PyObject *py_load_binary(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"api",           "name",        "kernel", "shared_mem", "device", "context",
                            "device_handle", "build_flags", "format", "max_spills", "flags",  NULL};
    int api, format, max_spills;
    long device;
    const char *name, *build_flags;
    PyObject *kernel_o, *context_o, *device_o;
    Py_ssize_t shared_mem;
    unsigned int flags;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "isOnlOOziiI", names, &api, &name, &kernel_o, &shared_mem, &device,
                                     &context_o, &device_o, &build_flags, &format, &max_spills, &flags))
        return NULL;
    /* Checked here too, for callers of _native itself: a CUdevice is an
     * int (2**32 would be device 0), and a negative size is no size. */
    if (api == CG_LOAD_API_CUDA && (device < 0 || device > INT_MAX))
        return PyErr_Format(PyExc_ValueError, "device %ld: expected a device number from 0 to %d (a CUdevice ordinal)",
                            device, INT_MAX);
    if (shared_mem < 0)
        return PyErr_Format(PyExc_ValueError, "shared_mem %zd: expected a number of bytes, 0 or more", shared_mem);
    /* Any bytes-like object, copied once unless it is bytes: Py_buffer is in
     * the limited API only from 3.11, and the extension serves 3.9. */
    PyObject *kernel = PyBytes_FromObject(kernel_o);
    char *kernel_buf;
    Py_ssize_t kernel_len;
    if (!kernel || PyBytes_AsStringAndSize(kernel, &kernel_buf, &kernel_len) < 0) {
        Py_XDECREF(kernel);
        return NULL;
    }
    int bad = 0;
    cg_load_request req = {
        .api = (cg_load_api)api,
        .context = as_handle(context_o, "context", &bad),
        .device = as_handle(device_o, "device", &bad),
        .cuda_device = (int)device,
        .bytes = kernel_buf,
        .size = (size_t)kernel_len,
        .format = (cg_load_format)format,
        .kernel_name = name,
        .build_flags = build_flags,
        .shared_mem = (size_t)shared_mem,
        .max_spills = max_spills,
        .flags = flags,
    };
    if (bad) {
        Py_DECREF(kernel);
        return NULL;
    }
    cg_load_result *res = NULL;
    int rc = 0, enum_rc = 0;
    char why[320] = "";
    Py_BEGIN_ALLOW_THREADS if (req.api == CG_LOAD_API_ZE && !req.device) enum_rc =
        ze_device(device, &req.context, &req.device, why, sizeof why);
    if (enum_rc == 0) rc = cg_load_binary(&req, &res);
    Py_END_ALLOW_THREADS Py_DECREF(kernel);
    if (enum_rc == -2) return PyErr_Format(PyExc_ValueError, "%s", why);
    if (enum_rc < 0) return raise_load(CG_LOAD_EDRIVER, req.api, why, ze_error_call, ze_error_result, "", 0);
    if (!res) return raise_load(rc ? rc : CG_ENOMEM, req.api, "out of memory", NULL, 0, NULL, 0);
    if (rc != CG_OK) {
        raise_load(rc, req.api, res->message, res->failed_call, res->api_result, res->build_log, res->out_of_resources);
        cg_load_result_free(res);
        return NULL;
    }
    PyObject *out = Py_BuildValue("(KKiiissiiLLLi)", (unsigned long long)(uintptr_t)res->module,
                                  (unsigned long long)(uintptr_t)res->kernel, res->n_regs, res->n_spills,
                                  res->max_threads, res->build_flags, res->build_log, (int)res->source, res->retried,
                                  res->spill_bytes, res->private_bytes, res->local_bytes, res->simd_width);
    /* A module the cache keeps outlives the result; one the result owns
     * (no cache) must outlive the handles just returned: Triton never
     * unloads, and neither does this (the result is kept). */
    if (!res->owns_module) cg_load_result_free(res);
    return out;
}

PyObject *py_load_stats(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    cg_load_stats s;
    cg_load_get_stats(&s);
    return Py_BuildValue("{sKsKsKsKsKsKsKsKsKsK}", "requests", (unsigned long long)s.requests, "memory_hits",
                         (unsigned long long)s.memory_hits, "waits", (unsigned long long)s.waits, "disk_hits",
                         (unsigned long long)s.disk_hits, "builds", (unsigned long long)s.builds, "retries",
                         (unsigned long long)s.retries, "disk_writes", (unsigned long long)s.disk_writes, "corrupt",
                         (unsigned long long)s.corrupt, "write_failures", (unsigned long long)s.write_failures,
                         "evictions", (unsigned long long)s.evictions);
}

PyObject *py_cache_dir(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    const char *dir = cg_load_cache_dir();
    return PyUnicode_DecodeFSDefault(dir ? dir : "");
}
