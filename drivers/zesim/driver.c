/*
 * Driver entry points: the ProcAddrTable getters the Level Zero loader looks up, and the driver object itself.
 *
 * The 1.8.12 loader refuses a driver that lacks any of the non-Exp getters (plus zetGetTracerExpProcAddrTable),
 * and a NULL table entry makes it fail (0x78000001 with ZE_ENABLE_LOADER_INTERCEPT=1). So every getter first
 * fills the whole table with a generic "unsupported" function and then overwrites the entries the simulator
 * implements.
 */
#include "internal.h"

#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the generic "unsupported" entry ------------------------------------------------------------------------ */

/*
 * Why one argument-less function can sit in every slot: on x86-64 System V (the only ABI this driver targets)
 * arguments travel in registers or on the caller-cleaned stack, so a callee that takes no arguments and returns a
 * 32-bit ze_result_t in eax is safe to call through any `ze_result_t (*)(...)` signature; it simply ignores the
 * arguments. Writing one exact-signature stub per entry (hundreds across ze/zet/zes) would add nothing but bulk.
 */
static ze_result_t cgsim_unsupported(void) { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }

_Static_assert(sizeof(void (*)(void)) == sizeof(void *), "function pointers must be pointer sized");

/* Every Level Zero dditable struct consists only of function pointers, so it is filled slot by slot via memcpy
 * (no aliasing tricks on the struct members). */
static void fill_unsupported(void *table, size_t size)
{
    ze_result_t (*stub)(void) = cgsim_unsupported;
    unsigned char *bytes = table;
    for (size_t off = 0; off + sizeof stub <= size; off += sizeof stub)
        memcpy(bytes + off, &stub, sizeof stub);
}

static ze_result_t check_getter(ze_api_version_t version, const void *table)
{
    if (table == NULL) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT))
        return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    return ZE_RESULT_SUCCESS;
}

/* A getter whose table the simulator implements in part: `filler` sets the implemented entries. */
#define CGSIM_GETTER(getter, table_type, filler)                                                                       \
    ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, table_type *pDdiTable)                        \
    {                                                                                                                  \
        ze_result_t r = check_getter(version, pDdiTable);                                                              \
        if (r != ZE_RESULT_SUCCESS) return r;                                                                          \
        fill_unsupported(pDdiTable, sizeof *pDdiTable);                                                                \
        filler(pDdiTable);                                                                                             \
        return ZE_RESULT_SUCCESS;                                                                                      \
    }

/* A getter whose whole table is unsupported (tools, sysman, images, experimental extensions...). */
#define CGSIM_GETTER_UNSUPPORTED(getter, table_type)                                                                   \
    ZE_DLLEXPORT ze_result_t ZE_APICALL getter(ze_api_version_t version, table_type *pDdiTable)                        \
    {                                                                                                                  \
        ze_result_t r = check_getter(version, pDdiTable);                                                              \
        if (r != ZE_RESULT_SUCCESS) return r;                                                                          \
        fill_unsupported(pDdiTable, sizeof *pDdiTable);                                                                \
        return ZE_RESULT_SUCCESS;                                                                                      \
    }

/* ---- driver object ------------------------------------------------------------------------------------------ */

static struct cgsim_driver the_driver;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static ze_result_t init_result = ZE_RESULT_ERROR_UNINITIALIZED;
static atomic_bool initialized;

static void init_driver_once(void)
{
    struct cgsim_config cfg;
    if (!cgsim_config_load(&cfg)) {
        /* The loader drops a driver whose pfnInit fails, so zeInit reports ZE_RESULT_ERROR_UNINITIALIZED; the
         * stderr line printed by cgsim_config_load says why. */
        init_result = ZE_RESULT_ERROR_INVALID_ARGUMENT;
        return;
    }
    the_driver.config = cfg;
    cgsim_object_init(&the_driver.hdr, CGSIM_KIND_DRIVER);
    the_driver.device_count = cfg.devices;
    bool ok = cgsim_handle_register(&the_driver.hdr);
    for (uint32_t i = 0; ok && i < cfg.devices; i++) {
        struct cgsim_device *dev = &the_driver.devices[i];
        cgsim_object_init(&dev->hdr, CGSIM_KIND_DEVICE);
        dev->driver = &the_driver;
        dev->index = i;
        ok = cgsim_handle_register(&dev->hdr);
    }
    init_result = ok ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    atomic_store(&initialized, ok);
}

struct cgsim_driver *cgsim_driver_get_initialized(void) { return atomic_load(&initialized) ? &the_driver : NULL; }

/* pfnInit: the loader calls it twice (once while checking drivers, once from zeInit); both see the same answer. */
static ze_result_t ZE_APICALL cgsim_init(ze_init_flags_t flags)
{
    if (flags & ~(ze_init_flags_t)(ZE_INIT_FLAG_GPU_ONLY | ZE_INIT_FLAG_VPU_ONLY))
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    /* A simulated GPU has nothing to offer to a VPU-only request. */
    if (flags == ZE_INIT_FLAG_VPU_ONLY) return ZE_RESULT_ERROR_UNINITIALIZED;
    pthread_once(&init_once, init_driver_once);
    return init_result;
}

static ze_result_t ZE_APICALL cgsim_driver_get(uint32_t *pCount, ze_driver_handle_t *phDrivers)
{
    CGSIM_CHECK_PTR(pCount);
    struct cgsim_driver *drv = cgsim_driver_get_initialized();
    if (!drv) return ZE_RESULT_ERROR_UNINITIALIZED;
    if (*pCount == 0 || phDrivers == NULL) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    phDrivers[0] = (ze_driver_handle_t)drv;
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_driver_get_api_version(ze_driver_handle_t hDriver, ze_api_version_t *version)
{
    CGSIM_CHECK_HANDLE(drv, struct cgsim_driver, hDriver, CGSIM_KIND_DRIVER);
    (void)drv;
    CGSIM_CHECK_PTR(version);
    *version = ZE_API_VERSION_CURRENT;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_driver_get_properties(ze_driver_handle_t hDriver, ze_driver_properties_t *props)
{
    CGSIM_CHECK_HANDLE(drv, struct cgsim_driver, hDriver, CGSIM_KIND_DRIVER);
    CGSIM_CHECK_PTR(props);
    memset(props->uuid.id, 0, sizeof props->uuid.id);
    memcpy(props->uuid.id, "cgsim-driver", 12);
    /* With CGSIM_DRIVER_VERSION, packed as NEO packs it (compute-runtime, driver_handle_imp.cpp):
     * major 1, the API's minor, the low 16 bits of the build number. */
    props->driverVersion =
        drv->config.neo_version
            ? (1u << 24) | ((uint32_t)ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT) << 16) | (drv->config.build & 0xFFFFu)
            : CGSIM_DRIVER_VERSION;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_driver_get_ipc_properties(ze_driver_handle_t hDriver,
                                                              ze_driver_ipc_properties_t *props)
{
    CGSIM_CHECK_HANDLE(drv, struct cgsim_driver, hDriver, CGSIM_KIND_DRIVER);
    (void)drv;
    CGSIM_CHECK_PTR(props);
    props->flags = 0; /* no IPC: everything lives in one process */
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_driver_get_extension_properties(ze_driver_handle_t hDriver, uint32_t *pCount,
                                                                    ze_driver_extension_properties_t *props)
{
    CGSIM_CHECK_HANDLE(drv, struct cgsim_driver, hDriver, CGSIM_KIND_DRIVER);
    CGSIM_CHECK_PTR(pCount);
    /* With CGSIM_DRIVER_VERSION, the one extension NEO's version string comes through. */
    uint32_t have = drv->config.neo_version ? 1 : 0;
    if (props && have && *pCount >= 1) {
        memset(&props[0], 0, sizeof props[0]);
        snprintf(props[0].name, sizeof props[0].name, "%s", "ZE_intel_get_driver_version_string");
        props[0].version = ZE_MAKE_VERSION(1, 0);
    }
    if (!props || *pCount > have) *pCount = have;
    return ZE_RESULT_SUCCESS;
}

/* zeIntelGetDriverVersionString as NEO writes it (compute-runtime, zex_driver.cpp): "MAJOR.MINOR.BUILD",
 * "+HOTFIX" when the hotfix is not 0; asked for the size (*pVersionSize == 0) it answers strlen, without the
 * NUL, and it copies *pVersionSize characters without adding one. */
static ze_result_t ZE_APICALL cgsim_intel_get_driver_version_string(ze_driver_handle_t hDriver, char *pDriverVersion,
                                                                    size_t *pVersionSize)
{
    CGSIM_CHECK_HANDLE(drv, struct cgsim_driver, hDriver, CGSIM_KIND_DRIVER);
    CGSIM_CHECK_PTR(pVersionSize);
    char s[64];
    int n = snprintf(s, sizeof s, "%u.%u.%u", (unsigned)ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT),
                     (unsigned)ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT), (unsigned)drv->config.build);
    if (drv->config.hotfix > 0) snprintf(s + n, sizeof s - (size_t)n, "+%u", (unsigned)drv->config.hotfix);
    if (*pVersionSize == 0) {
        *pVersionSize = strlen(s);
        return ZE_RESULT_SUCCESS;
    }
    CGSIM_CHECK_PTR(pDriverVersion);
    size_t copy = *pVersionSize < strlen(s) ? *pVersionSize : strlen(s);
    memcpy(pDriverVersion, s, copy);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_driver_get_extension_function_address(ze_driver_handle_t hDriver, const char *name,
                                                                          void **ppFunctionAddress)
{
    CGSIM_CHECK_HANDLE(drv, struct cgsim_driver, hDriver, CGSIM_KIND_DRIVER);
    CGSIM_CHECK_PTR(name);
    CGSIM_CHECK_PTR(ppFunctionAddress);
    if (drv->config.neo_version && strcmp(name, "zeIntelGetDriverVersionString") == 0) {
        *ppFunctionAddress = (void *)cgsim_intel_get_driver_version_string;
        return ZE_RESULT_SUCCESS;
    }
    return ZE_RESULT_ERROR_INVALID_ARGUMENT; /* no other extension functions */
}

static void fill_global_table(ze_global_dditable_t *t) { t->pfnInit = cgsim_init; }

void cgsim_fill_driver_table(ze_driver_dditable_t *t)
{
    t->pfnGet = cgsim_driver_get;
    t->pfnGetApiVersion = cgsim_driver_get_api_version;
    t->pfnGetProperties = cgsim_driver_get_properties;
    t->pfnGetIpcProperties = cgsim_driver_get_ipc_properties;
    t->pfnGetExtensionProperties = cgsim_driver_get_extension_properties;
    t->pfnGetExtensionFunctionAddress = cgsim_driver_get_extension_function_address;
}

/* ---- the exported getters ----------------------------------------------------------------------------------- */

CGSIM_GETTER(zeGetGlobalProcAddrTable, ze_global_dditable_t, fill_global_table)
CGSIM_GETTER(zeGetDriverProcAddrTable, ze_driver_dditable_t, cgsim_fill_driver_table)
CGSIM_GETTER(zeGetDeviceProcAddrTable, ze_device_dditable_t, cgsim_fill_device_table)
CGSIM_GETTER(zeGetContextProcAddrTable, ze_context_dditable_t, cgsim_fill_context_table)
CGSIM_GETTER(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t, cgsim_fill_queue_table)
CGSIM_GETTER(zeGetCommandListProcAddrTable, ze_command_list_dditable_t, cgsim_fill_list_table)
CGSIM_GETTER(zeGetFenceProcAddrTable, ze_fence_dditable_t, cgsim_fill_fence_table)
CGSIM_GETTER(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t, cgsim_fill_event_pool_table)
CGSIM_GETTER(zeGetEventProcAddrTable, ze_event_dditable_t, cgsim_fill_event_table)
CGSIM_GETTER(zeGetModuleProcAddrTable, ze_module_dditable_t, cgsim_fill_module_table)
CGSIM_GETTER(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t, cgsim_fill_build_log_table)
CGSIM_GETTER(zeGetKernelProcAddrTable, ze_kernel_dditable_t, cgsim_fill_kernel_table)
CGSIM_GETTER(zeGetMemProcAddrTable, ze_mem_dditable_t, cgsim_fill_mem_table)

CGSIM_GETTER_UNSUPPORTED(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zeGetImageProcAddrTable, ze_image_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)

CGSIM_GETTER_UNSUPPORTED(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetContextProcAddrTable, zet_context_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetDebugProcAddrTable, zet_debug_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetDeviceProcAddrTable, zet_device_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetMetricProcAddrTable, zet_metric_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetModuleProcAddrTable, zet_module_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)

CGSIM_GETTER_UNSUPPORTED(zesGetDeviceProcAddrTable, zes_device_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetDriverProcAddrTable, zes_driver_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetEngineProcAddrTable, zes_engine_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetFanProcAddrTable, zes_fan_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetLedProcAddrTable, zes_led_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetPowerProcAddrTable, zes_power_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetPsuProcAddrTable, zes_psu_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetRasProcAddrTable, zes_ras_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
CGSIM_GETTER_UNSUPPORTED(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
