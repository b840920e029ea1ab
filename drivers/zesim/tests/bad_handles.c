/* zesim_bad_handles_get_spec_codes: NULL pointers give ZE_RESULT_ERROR_INVALID_NULL_POINTER, NULL handles
 * ZE_RESULT_ERROR_INVALID_NULL_HANDLE, and handles the simulator did not create (or already destroyed)
 * ZE_RESULT_ERROR_INVALID_ARGUMENT, never a crash.
 *
 * With ZE_ENABLE_LOADER_INTERCEPT=1 the 1.8.12 loader dereferences every handle itself before calling the driver,
 * so NULL and foreign handles crash inside the loader; that mode only checks the pointer arguments. */
#include "zesim_test.h"

int main(void)
{
    struct sim s = sim_open();
    int intercept = loader_intercepts();

    /* NULL out-pointers reach the driver in every loader mode. */
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDeviceGetProperties(s.device, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDriverGetProperties(s.driver, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeContextCreate(s.driver, NULL, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeDeviceGet(s.driver, NULL, NULL));
    ze_module_desc_t md = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                           .format = ZE_MODULE_FORMAT_IL_SPIRV,
                           .inputSize = 4,
                           .pInputModule = NULL};
    ze_module_handle_t mod;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeModuleCreate(s.context, s.device, &md, &mod, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeModuleCreate(s.context, s.device, NULL, &mod, NULL));
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeMemAllocHost(s.context, &hd, 64, 0, NULL));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeMemFree(s.context, NULL));
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .count = 0};
    ze_event_pool_handle_t pool;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_SIZE, zeEventPoolCreate(s.context, &pd, 0, NULL, &pool));
    pd.count = 1;
    OK(zeEventPoolCreate(s.context, &pd, 0, NULL, &pool));
    ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC, .index = 5};
    ze_event_handle_t ev;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventCreate(pool, &ed, &ev));
    ed.index = 0;
    OK(zeEventCreate(pool, &ed, &ev));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventCreate(pool, &ed, &ev)); /* slot taken */
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_POINTER, zeEventQueryKernelTimestamp(ev, NULL));
    /* Unimplemented entry points answer UNSUPPORTED_FEATURE instead of crashing. */
    ze_image_desc_t id = {.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC};
    ze_image_handle_t image;
    CHECK_ZE(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, zeImageCreate(s.context, s.device, &id, &image));

    if (!intercept) {
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeDeviceGetProperties(NULL, NULL));
        ze_device_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeDeviceGetProperties(NULL, &dp));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeEventHostSignal(NULL));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeContextDestroy(NULL));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, zeModuleCreate(NULL, s.device, &md, &mod, NULL));

        /* A foreign object that even carries plausible bytes is refused without trusting them. */
        uint32_t fake[16] = {0x4347534du, 2};
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeDeviceGetProperties((ze_device_handle_t)fake, &dp));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventHostSignal((ze_event_handle_t)fake));
        /* A handle of the wrong kind. */
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventHostSignal((ze_event_handle_t)pool));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeContextDestroy((ze_context_handle_t)s.device));

        /* Destroyed handles are refused. */
        OK(zeEventDestroy(ev));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventHostSignal(ev));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeEventDestroy(ev));
        ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
        ze_context_handle_t ctx2;
        OK(zeContextCreate(s.driver, &cd, &ctx2));
        OK(zeContextDestroy(ctx2));
        CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeContextDestroy(ctx2));
    } else {
        OK(zeEventDestroy(ev));
    }
    OK(zeEventPoolDestroy(pool));
    sim_close(&s);
    puts(intercept ? "ok (handle checks skipped: the loader dereferences handles in intercept mode)" : "ok");
    return 0;
}
