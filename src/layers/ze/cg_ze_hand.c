/* cg_ze_hand.c: the Level Zero layer's hand-written wrappers (wrapper = hand in apis/ze.ini). cg_ze.c
 * #includes this file at its end, so it sees the generated cgl_sites, cgl_layer and cgl_guarded_<name>
 * (include/callguard/layer.h, "Hand-written wrappers"). Not compiled on its own.
 *
 * zeInit and zeDriverGet make their guarded call, and once one of them succeeded, ask the runtime to
 * read the drivers' identity for the quirks file (cg_layer_identify, docs/quirks.md). The runtime runs
 * the probe below once per process and only when the quirks file has a Level Zero quirk; every later
 * call costs one atomic load more. zeDriverGet is there for programs whose loader was initialized by
 * someone else (zeInitDrivers in a newer loader, which 1.8.12's header lacks).
 *
 * What Level Zero says of a driver: ze_driver_properties_t::driverVersion, which NEO packs as
 * (1 << 24) | (L0 minor << 16) | (its build number & 0xFFFF) (compute-runtime,
 * level_zero/core/source/driver/driver_handle_imp.cpp); no driver name; the first device's PCI vendor
 * id and name. NEO's extension ZE_intel_get_driver_version_string (zeIntelGetDriverVersionString)
 * writes "MAJOR.MINOR.BUILD" plus "+HOTFIX" when the hotfix is not 0, the whole build number
 * (compute-runtime, level_zero/api/driver_experimental/public/zex_driver.cpp); asked for its size it
 * answers strlen, without the NUL, and writes no NUL. The identity's version is "BUILD.HOTFIX" from
 * the string, else "BUILD" from driverVersion. The extension is only called where the handle the
 * loader gave is the driver's own: one driver, and the loader not intercepting (with
 * ZE_ENABLE_LOADER_INTERCEPT=1, or several drivers, 1.8.12's loader hands out handles of its own,
 * which the driver's extension function would not recognize). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CGL_ZE_MAX_DRIVERS 16
#define CGL_ZE_MAX_EXTENSIONS 128

typedef ze_result_t (*cgl_ze_version_string_fn)(ze_driver_handle_t, char *, size_t *);

/* "1.6.39122+11" -> "39122.11", "1.6.39122" -> "39122"; 0 when the string is not of that form. */
static int cgl_ze_build_of(const char *s, char *out, size_t cap)
{
    const char *p = s;
    for (int dots = 0; dots < 2; dots++) {
        p = strchr(p, '.');
        if (!p) return 0;
        p++;
    }
    size_t n = strspn(p, "0123456789");
    if (!n) return 0;
    if (p[n] == '+' && p[n + 1] >= '0' && p[n + 1] <= '9')
        snprintf(out, cap, "%.*s.%.*s", (int)n, p, (int)strspn(p + n + 1, "0123456789"), p + n + 1);
    else
        snprintf(out, cap, "%.*s", (int)n, p);
    return 1;
}

static void cgl_ze_version_string(cg_layer *l, ze_driver_handle_t d, char *out, size_t cap)
{
    ze_result_t (*ext_props)(ze_driver_handle_t, uint32_t *, ze_driver_extension_properties_t *) =
        cg_real_function(l, "zeDriverGetExtensionProperties");
    ze_result_t (*ext_addr)(ze_driver_handle_t, const char *, void **) =
        cg_real_function(l, "zeDriverGetExtensionFunctionAddress");
    if (!ext_props || !ext_addr) return;
    static ze_driver_extension_properties_t ext[CGL_ZE_MAX_EXTENSIONS]; /* under the runtime's probe lock */
    uint32_t n = 0;
    if (ext_props(d, &n, NULL) != ZE_RESULT_SUCCESS || n == 0) return;
    if (n > CGL_ZE_MAX_EXTENSIONS) n = CGL_ZE_MAX_EXTENSIONS;
    memset(ext, 0, sizeof ext);
    if (ext_props(d, &n, ext) != ZE_RESULT_SUCCESS) return;
    int has = 0;
    for (uint32_t i = 0; i < n && i < CGL_ZE_MAX_EXTENSIONS; i++)
        has |= strncmp(ext[i].name, "ZE_intel_get_driver_version_string", sizeof ext[i].name) == 0;
    void *fn = NULL;
    if (!has || ext_addr(d, "zeIntelGetDriverVersionString", &fn) != ZE_RESULT_SUCCESS || !fn) return;
    size_t size = 0;
    if (((cgl_ze_version_string_fn)fn)(d, NULL, &size) != ZE_RESULT_SUCCESS || size == 0 || size >= 64) return;
    char buf[80];
    memset(buf, 0, sizeof buf);
    if (((cgl_ze_version_string_fn)fn)(d, buf, &size) != ZE_RESULT_SUCCESS) return;
    buf[sizeof buf - 1] = '\0';
    cgl_ze_build_of(buf, out, cap);
}

static unsigned cgl_ze_probe(cg_layer *l, cg_identity *ids, unsigned max)
{
    ze_result_t (*driver_get)(uint32_t *, ze_driver_handle_t *) = cg_real_function(l, "zeDriverGet");
    ze_result_t (*driver_props)(ze_driver_handle_t, ze_driver_properties_t *) =
        cg_real_function(l, "zeDriverGetProperties");
    ze_result_t (*device_get)(ze_driver_handle_t, uint32_t *, ze_device_handle_t *) =
        cg_real_function(l, "zeDeviceGet");
    ze_result_t (*device_props)(ze_device_handle_t, ze_device_properties_t *) =
        cg_real_function(l, "zeDeviceGetProperties");
    if (!driver_get || !driver_props) return 0;
    ze_driver_handle_t drivers[CGL_ZE_MAX_DRIVERS];
    uint32_t n = 0;
    if (driver_get(&n, NULL) != ZE_RESULT_SUCCESS || n == 0) return 0;
    if (n > CGL_ZE_MAX_DRIVERS) n = CGL_ZE_MAX_DRIVERS;
    if (driver_get(&n, drivers) != ZE_RESULT_SUCCESS) return 0;
    const char *intercept = getenv("ZE_ENABLE_LOADER_INTERCEPT");
    int own_handles = n == 1 && !(intercept && strcmp(intercept, "0") != 0 && *intercept);
    unsigned got = 0;
    for (uint32_t i = 0; i < n && got < max; i++) {
        cg_identity *id = &ids[got];
        ze_driver_properties_t dp;
        memset(&dp, 0, sizeof dp);
        dp.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
        if (driver_props(drivers[i], &dp) != ZE_RESULT_SUCCESS) continue;
        snprintf(id->version, sizeof id->version, "%u", (unsigned)(dp.driverVersion & 0xFFFFu));
        if (own_handles) cgl_ze_version_string(l, drivers[i], id->version, sizeof id->version);
        ze_device_handle_t dev = NULL;
        uint32_t nd = 1;
        if (device_get && device_props && device_get(drivers[i], &nd, &dev) == ZE_RESULT_SUCCESS && nd >= 1 && dev) {
            ze_device_properties_t p;
            memset(&p, 0, sizeof p);
            p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
            if (device_props(dev, &p) == ZE_RESULT_SUCCESS) {
                id->vendor = p.vendorId;
                size_t len = strnlen(p.name, sizeof p.name);
                if (len >= sizeof id->name) len = sizeof id->name - 1;
                memcpy(id->name, p.name, len);
                id->name[len] = '\0';
            }
        }
        got++;
    }
    return got;
}

CG_EXPORT ze_result_t ZE_APICALL zeInit(ze_init_flags_t flags)
{
    ze_result_t r = cgl_guarded_zeInit(flags);
    if (r == ZE_RESULT_SUCCESS) cg_layer_identify(&cgl_layer, cgl_ze_probe);
    return r;
}

CG_EXPORT ze_result_t ZE_APICALL zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers)
{
    ze_result_t r = cgl_guarded_zeDriverGet(pCount, phDrivers);
    if (r == ZE_RESULT_SUCCESS) cg_layer_identify(&cgl_layer, cgl_ze_probe);
    return r;
}
