/* A program that reaches Level Zero the way Intel's SYCL runtime does:
 * dlopen("libze_loader.so.1") and dlsym of each entry point by name, some
 * of which the 1.8.12 headers callguard was built from do not have. Run
 * under `callguard run` with CALLGUARD_ZE_LIBRARY naming the newer-loader
 * stand-in (newer_loader.c), it checks that
 *   - a second dlopen of the soname returns the same handle;
 *   - the header's names come from callguard's shim (the object that
 *     defines them is not the one that defines the stand-in's names);
 *   - the stand-in's own names (zeDeviceGetRootDevice, zeInitDrivers,
 *     zerGetLastErrorDescription, an idempotent zeLoaderInit) and a name
 *     only Debian's loader has (zelLoaderGetVersions) work and return what
 *     the stand-in or the loader returns;
 *   - a name neither has is NULL.
 * Prints "zeDriverGet calls N" for the report check; exits 1 naming the
 * first check that failed. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <level_zero/loader/ze_loader.h>
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "newer_loader_client: %s: ", #cond);                                                       \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static void *h;

static void *sym(const char *name)
{
    void *p = dlsym(h, name);
    CHECK(p != NULL, "dlsym(%s): %s", name, dlerror());
    return p;
}

/* The object a function lies in (its load address). */
static void *object_of(void *fn, const char **file)
{
    Dl_info info = {0};
    CHECK(dladdr(fn, &info) && info.dli_fbase, "dladdr");
    if (file) *file = info.dli_fname;
    return info.dli_fbase;
}

typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
} init_driver_type_desc; /* API 1.10's ze_init_driver_type_desc_t */

int main(void)
{
    h = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL, "dlopen: %s", dlerror());
    void *again = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    CHECK(again == h, "a second dlopen returned %p, the first %p", again, h);

    /* Guarded: the header's names. */
    __typeof__(zeInit) *init = (__typeof__(zeInit) *)sym("zeInit");
    __typeof__(zeDriverGet) *driver_get = (__typeof__(zeDriverGet) *)sym("zeDriverGet");
    __typeof__(zeDeviceGet) *device_get = (__typeof__(zeDeviceGet) *)sym("zeDeviceGet");
    /* The stand-in's. */
    ze_result_t (*loader_init)(void) = (ze_result_t(*)(void))sym("zeLoaderInit");
    ze_result_t (*root_device)(ze_device_handle_t, ze_device_handle_t *) =
        (ze_result_t(*)(ze_device_handle_t, ze_device_handle_t *))sym("zeDeviceGetRootDevice");
    ze_result_t (*init_drivers)(uint32_t *, ze_driver_handle_t *, init_driver_type_desc *) =
        (ze_result_t(*)(uint32_t *, ze_driver_handle_t *, init_driver_type_desc *))sym("zeInitDrivers");
    ze_result_t (*last_error)(const char **) = (ze_result_t(*)(const char **))sym("zerGetLastErrorDescription");
    /* Debian's loader's own, not in the header: forwarded. */
    __typeof__(zelLoaderGetVersions) *versions = (__typeof__(zelLoaderGetVersions) *)sym("zelLoaderGetVersions");

    const char *guarded_file, *standin_file, *loader_file;
    void *guarded = object_of((void *)driver_get, &guarded_file);
    void *standin = object_of((void *)root_device, &standin_file);
    void *loader = object_of((void *)versions, &loader_file);
    CHECK(object_of((void *)init, NULL) == guarded && object_of((void *)device_get, NULL) == guarded,
          "the guarded names lie in one object");
    CHECK(guarded != standin && guarded != loader && standin != loader,
          "zeDriverGet from %s, zeDeviceGetRootDevice from %s, zelLoaderGetVersions from %s: three objects",
          guarded_file, standin_file, loader_file);
    CHECK(object_of((void *)init_drivers, NULL) == standin && object_of((void *)last_error, NULL) == standin &&
              object_of((void *)loader_init, NULL) == standin,
          "the stand-in's names lie in the stand-in");
    printf("guarded names from %s\nstand-in names from %s\nloader names from %s\n", guarded_file, standin_file,
           loader_file);

    /* Neither library has these. */
    CHECK(dlsym(h, "zeCgNoSuchEntryPoint") == NULL, "an unknown ze name resolved");
    CHECK(dlsym(h, "zerCgNoSuchEntryPoint") == NULL, "an unknown zer name resolved");

    /* Working functions, each returning what its library returns. */
    ze_result_t first = loader_init();
    CHECK(first == ZE_RESULT_SUCCESS, "zeLoaderInit returned 0x%x", (unsigned)first);
    CHECK(loader_init() == first, "zeLoaderInit twice: the stand-in returns the first result again");
    CHECK(init(0) == ZE_RESULT_SUCCESS, "zeInit");
    uint32_t n = 0;
    CHECK(driver_get(&n, NULL) == ZE_RESULT_SUCCESS && n == 1, "zeDriverGet count %u (the simulator only)", n);
    ze_driver_handle_t driver = NULL;
    CHECK(driver_get(&n, &driver) == ZE_RESULT_SUCCESS && driver, "zeDriverGet");
    uint32_t nd = 1;
    ze_device_handle_t device = NULL;
    CHECK(device_get(driver, &nd, &device) == ZE_RESULT_SUCCESS && device, "zeDeviceGet");

    ze_device_handle_t root = device;
    CHECK(root_device(device, &root) == ZE_RESULT_SUCCESS && root == NULL,
          "zeDeviceGetRootDevice: the simulator's device is a root device (NULL), got %p", (void *)root);
    CHECK(root_device(NULL, &root) == ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "zeDeviceGetRootDevice(NULL)");

    init_driver_type_desc desc = {.stype =
                                      (ze_structure_type_t)0x00020021 /* ZE_STRUCTURE_TYPE_INIT_DRIVER_TYPE_DESC */,
                                  .flags = 1u << 0 /* GPU */};
    uint32_t m = 0;
    CHECK(init_drivers(&m, NULL, &desc) == ZE_RESULT_SUCCESS && m == 1, "zeInitDrivers count %u", m);
    ze_driver_handle_t d2 = NULL;
    CHECK(init_drivers(&m, &d2, &desc) == ZE_RESULT_SUCCESS && d2 == driver,
          "zeInitDrivers gives zeDriverGet's driver (%p, %p)", (void *)d2, (void *)driver);

    const char *text = NULL;
    CHECK(last_error(&text) == ZE_RESULT_SUCCESS && text && strstr(text, "newer-loader stand-in"),
          "zerGetLastErrorDescription: %s", text ? text : "(null)");

    size_t nv = 0;
    CHECK(versions(&nv, NULL) == ZE_RESULT_SUCCESS && nv >= 1, "zelLoaderGetVersions: %zu components", nv);

    printf("zeDriverGet calls 2\n");
    return 0;
}
