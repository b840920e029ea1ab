/* zesim_init_reports_simulated_device: zeInit, one driver, CGSIM_DEVICES devices with believable properties. */
#include "zesim_test.h"

int main(void)
{
    OK(zeInit(0));
    uint32_t n = 0;
    OK(zeDriverGet(&n, NULL));
    CHECK(n == 1);
    ze_driver_handle_t driver;
    OK(zeDriverGet(&n, &driver));

    ze_api_version_t version = 0;
    OK(zeDriverGetApiVersion(driver, &version));
    CHECK(ZE_MAJOR_VERSION(version) == 1);
    ze_driver_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
    OK(zeDriverGetProperties(driver, &dp));
    CHECK(dp.driverVersion != 0);

    /* The test runs with CGSIM_DEVICES=3. */
    uint32_t count = 0;
    OK(zeDeviceGet(driver, &count, NULL));
    CHECK(count == 3);
    ze_device_handle_t devices[3];
    OK(zeDeviceGet(driver, &count, devices));
    ze_device_properties_t props[3];
    for (uint32_t i = 0; i < count; i++) {
        props[i] = (ze_device_properties_t){.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
        OK(zeDeviceGetProperties(devices[i], &props[i]));
        CHECK(props[i].type == ZE_DEVICE_TYPE_GPU);
        CHECK(strcmp(props[i].name, "callguard simulator") == 0);
        CHECK(props[i].vendorId != 0);
        CHECK(props[i].maxMemAllocSize > 0);
    }
    CHECK(memcmp(props[0].uuid.id, props[1].uuid.id, sizeof props[0].uuid.id) != 0);

    ze_device_compute_properties_t cp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES};
    OK(zeDeviceGetComputeProperties(devices[0], &cp));
    CHECK(cp.maxTotalGroupSize >= 256 && cp.numSubGroupSizes > 0);

    uint32_t mem_count = 0;
    OK(zeDeviceGetMemoryProperties(devices[0], &mem_count, NULL));
    CHECK(mem_count == 1);
    ze_device_memory_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES};
    OK(zeDeviceGetMemoryProperties(devices[0], &mem_count, &mp));
    CHECK(mp.totalSize > 0);

    uint32_t groups = 0;
    OK(zeDeviceGetCommandQueueGroupProperties(devices[0], &groups, NULL));
    CHECK(groups == 1);

    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t ctx;
    OK(zeContextCreate(driver, &cd, &ctx));
    OK(zeContextGetStatus(ctx));
    OK(zeContextDestroy(ctx));
    puts("ok");
    return 0;
}
