/* zesim_reports_a_chosen_driver_identity: CGSIM_DRIVER_VERSION, CGSIM_VENDOR_ID and CGSIM_DEVICE_NAME make the
 * simulator report a driver as NEO does: driverVersion (1 << 24) | (API minor << 16) | (BUILD & 0xFFFF), the
 * extension ZE_intel_get_driver_version_string, whose function writes "1.MINOR.BUILD+HOTFIX" (its size without
 * the NUL, no NUL written), the vendor id and the device name. */
#include "zesim_test.h"

#include <stdlib.h>

int main(void)
{
    setenv("CGSIM_DRIVER_VERSION", "26.27.39122.11", 1);
    setenv("CGSIM_VENDOR_ID", "0x8086", 1);
    setenv("CGSIM_DEVICE_NAME", "Intel(R) Arc(TM) A770 Graphics", 1);
    OK(zeInit(0));
    uint32_t n = 1;
    ze_driver_handle_t driver;
    OK(zeDriverGet(&n, &driver));
    ze_driver_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
    OK(zeDriverGetProperties(driver, &dp));
    uint32_t minor = ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT);
    CHECK(dp.driverVersion == ((1u << 24) | (minor << 16) | 39122u));

    uint32_t count = 1;
    ze_device_handle_t dev;
    OK(zeDeviceGet(driver, &count, &dev));
    ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    OK(zeDeviceGetProperties(dev, &p));
    CHECK(p.vendorId == 0x8086);
    CHECK(strcmp(p.name, "Intel(R) Arc(TM) A770 Graphics") == 0);

    uint32_t next = 0;
    OK(zeDriverGetExtensionProperties(driver, &next, NULL));
    CHECK(next == 1);
    ze_driver_extension_properties_t ext;
    OK(zeDriverGetExtensionProperties(driver, &next, &ext));
    CHECK(strcmp(ext.name, "ZE_intel_get_driver_version_string") == 0);
    void *fn = NULL;
    OK(zeDriverGetExtensionFunctionAddress(driver, "zeIntelGetDriverVersionString", &fn));
    CHECK(fn != NULL);
    /* The loader hands the driver's function out as it is: it knows the driver's own handle only, which the
     * application has in direct mode. */
    const char *intercept = getenv("ZE_ENABLE_LOADER_INTERCEPT");
    if (intercept && strcmp(intercept, "0") != 0) {
        puts("ok (intercept: the version string is not asked with the loader's handle)");
        return 0;
    }
    ze_result_t (*get)(ze_driver_handle_t, char *, size_t *) = (ze_result_t(*)(ze_driver_handle_t, char *, size_t *))fn;
    size_t size = 0;
    ze_result_t r = get(driver, NULL, &size);
    if (r != ZE_RESULT_SUCCESS) {
        /* a layer of the loader (tracing, validation) wraps the handle too */
        puts("ok (a loader layer's handle)");
        return 0;
    }
    char want[64], got[64];
    snprintf(want, sizeof want, "1.%u.39122+11", minor);
    CHECK(size == strlen(want));
    memset(got, 'x', sizeof got);
    OK(get(driver, got, &size));
    CHECK(memcmp(got, want, size) == 0 && got[size] == 'x'); /* as NEO: no NUL written */
    puts("ok");
    return 0;
}
