/* A stand-in for a Level Zero loader newer than Debian's 1.8.12, for tests only.
 *
 * libze_loader.so.1 (its soname) that forwards everything to Debian's real
 * loader, which is its one dependency (libcgtest-debian-ze.so, a link to it
 * beside this file; its run path says where), and adds what a newer loader
 * has and 1.8.12 lacks, as far as the tests and Intel's SYCL runtime need:
 *   - zeLoaderInit runs once: every later call returns the first result
 *     (1.8.12 initializes again, and its drivers then appear twice);
 *   - zeDeviceGetRootDevice (API 1.7): every simulator device is a root
 *     device, so *phRootDevice = NULL;
 *   - zeInitDrivers (API 1.10): zeInit, then zeDriverGet;
 *   - zerGetLastErrorDescription (the zer* runtime API of 1.21+): a fixed
 *     string that says where it came from.
 * None of these names is in the 1.8.12 headers, so they are declared here. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define STANDIN_EXPORT __attribute__((visibility("default")))

/* Debian's loader, already loaded as this library's dependency. */
static void *debian(const char *name)
{
    static void *h;
    if (!h) h = dlopen("libcgtest-debian-ze.so", RTLD_LAZY | RTLD_NOLOAD);
    void *p = h ? dlsym(h, name) : NULL;
    if (!p) {
        fprintf(stderr, "newer-loader stand-in: Debian's loader has no %s\n", name);
        abort();
    }
    return p;
}

STANDIN_EXPORT ze_result_t zeLoaderInit(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static int done;
    static ze_result_t first;
    static __thread int inside; /* the real one calling back in: straight through */
    if (inside) return ((ze_result_t(*)(void))debian("zeLoaderInit"))();
    pthread_mutex_lock(&lock);
    if (!done) {
        inside = 1;
        first = ((ze_result_t(*)(void))debian("zeLoaderInit"))();
        inside = 0;
        done = 1;
    }
    pthread_mutex_unlock(&lock);
    return first;
}

STANDIN_EXPORT ze_result_t zeDeviceGetRootDevice(ze_device_handle_t hDevice, ze_device_handle_t *phRootDevice)
{
    if (!hDevice) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!phRootDevice) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *phRootDevice = NULL;
    return ZE_RESULT_SUCCESS;
}

/* ze_init_driver_type_desc_t of API 1.10. */
typedef struct standin_init_driver_type_desc {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
} standin_init_driver_type_desc;

STANDIN_EXPORT ze_result_t zeInitDrivers(uint32_t *pCount, ze_driver_handle_t *phDrivers,
                                         standin_init_driver_type_desc *desc)
{
    if (!pCount || !desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    ze_result_t r = ((ze_result_t(*)(ze_init_flags_t))debian("zeInit"))(0);
    if (r != ZE_RESULT_SUCCESS) return r;
    return ((ze_result_t(*)(uint32_t *, ze_driver_handle_t *))debian("zeDriverGet"))(pCount, phDrivers);
}

STANDIN_EXPORT ze_result_t zerGetLastErrorDescription(const char **ppString)
{
    if (!ppString) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *ppString = "newer-loader stand-in: no error";
    return ZE_RESULT_SUCCESS;
}
