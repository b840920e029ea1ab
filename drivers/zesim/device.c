/*
 * Devices and contexts.
 *
 * The figures reported are plausible for a small integrated GPU; nothing depends on them except applications
 * that print or sanity-check them. Device memory is host memory in the simulator, so totalSize is a fixed 4 GiB.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CGSIM_MAX_ALLOC_SIZE (1ull << 32)
#define CGSIM_TOTAL_MEMORY (4ull << 30)

static ze_result_t ZE_APICALL cgsim_device_get(ze_driver_handle_t hDriver, uint32_t *pCount,
                                               ze_device_handle_t *phDevices)
{
    CGSIM_CHECK_HANDLE(drv, struct cgsim_driver, hDriver, CGSIM_KIND_DRIVER);
    CGSIM_CHECK_PTR(pCount);
    if (*pCount == 0 || phDevices == NULL) {
        *pCount = drv->device_count;
        return ZE_RESULT_SUCCESS;
    }
    uint32_t n = *pCount < drv->device_count ? *pCount : drv->device_count;
    for (uint32_t i = 0; i < n; i++)
        phDevices[i] = (ze_device_handle_t)&drv->devices[i];
    *pCount = n;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_sub_devices(ze_device_handle_t hDevice, uint32_t *pCount,
                                                           ze_device_handle_t *phSubdevices)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    (void)dev;
    (void)phSubdevices;
    CGSIM_CHECK_PTR(pCount);
    *pCount = 0; /* no sub-devices */
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_properties(ze_device_handle_t hDevice, ze_device_properties_t *p)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    CGSIM_CHECK_PTR(p);
    p->type = ZE_DEVICE_TYPE_GPU;
    p->vendorId = dev->driver->config.vendor_id;
    p->deviceId = 0xc600u + dev->index;
    p->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;
    p->subdeviceId = 0;
    p->coreClockRate = 1000;
    p->maxMemAllocSize = CGSIM_MAX_ALLOC_SIZE;
    p->maxHardwareContexts = 64;
    p->maxCommandQueuePriority = 0;
    p->numThreadsPerEU = 7;
    p->physicalEUSimdWidth = 8;
    p->numEUsPerSubslice = 8;
    p->numSubslicesPerSlice = 4;
    p->numSlices = 1;
    p->timerResolution = 1; /* 1 ns: timestamps come from CLOCK_MONOTONIC */
    p->timestampValidBits = 64;
    p->kernelTimestampValidBits = 64;
    /* The UUID encodes the device index so that devices are distinguishable and stable across runs. */
    memset(p->uuid.id, 0, sizeof p->uuid.id);
    memcpy(p->uuid.id, "cgsim-dev", 9);
    p->uuid.id[ZE_MAX_DEVICE_UUID_SIZE - 1] = (uint8_t)dev->index;
    memset(p->name, 0, sizeof p->name);
    snprintf(p->name, sizeof p->name, "%s", dev->driver->config.device_name);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_compute_properties(ze_device_handle_t hDevice,
                                                                  ze_device_compute_properties_t *p)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    (void)dev;
    CGSIM_CHECK_PTR(p);
    p->maxTotalGroupSize = 1024;
    p->maxGroupSizeX = 1024;
    p->maxGroupSizeY = 1024;
    p->maxGroupSizeZ = 64;
    p->maxGroupCountX = UINT32_MAX;
    p->maxGroupCountY = UINT32_MAX;
    p->maxGroupCountZ = UINT32_MAX;
    p->maxSharedLocalMemory = CGSIM_SHARED_LOCAL_MEMORY;
    p->numSubGroupSizes = 3;
    memset(p->subGroupSizes, 0, sizeof p->subGroupSizes);
    p->subGroupSizes[0] = 8;
    p->subGroupSizes[1] = 16;
    p->subGroupSizes[2] = 32;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_module_properties(ze_device_handle_t hDevice,
                                                                 ze_device_module_properties_t *p)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    (void)dev;
    CGSIM_CHECK_PTR(p);
    p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
    p->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
    p->fp16flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_INF_NAN;
    p->fp32flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_INF_NAN | ZE_DEVICE_FP_FLAG_FMA;
    p->fp64flags = 0;
    p->maxArgumentsSize = 2048;
    p->printfBufferSize = 4 * 1024 * 1024;
    memset(p->nativeKernelSupported.id, 0, sizeof p->nativeKernelSupported.id);
    memcpy(p->nativeKernelSupported.id, "CGSIMBIN", 8);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_queue_groups(ze_device_handle_t hDevice, uint32_t *pCount,
                                                            ze_command_queue_group_properties_t *p)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    (void)dev;
    CGSIM_CHECK_PTR(pCount);
    /* One group (ordinal 0) that does compute and copies; queues are host threads so there is no real limit. */
    if (*pCount == 0 || p == NULL) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    p[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
    p[0].maxMemoryFillPatternSize = 16;
    p[0].numQueues = 4;
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_memory_properties(ze_device_handle_t hDevice, uint32_t *pCount,
                                                                 ze_device_memory_properties_t *p)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    (void)dev;
    CGSIM_CHECK_PTR(pCount);
    if (*pCount == 0 || p == NULL) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    p[0].flags = 0;
    p[0].maxClockRate = 1600;
    p[0].maxBusWidth = 64;
    p[0].totalSize = CGSIM_TOTAL_MEMORY;
    memset(p[0].name, 0, sizeof p[0].name);
    snprintf(p[0].name, sizeof p[0].name, "host memory");
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_memory_access_properties(ze_device_handle_t hDevice,
                                                                        ze_device_memory_access_properties_t *p)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    (void)dev;
    CGSIM_CHECK_PTR(p);
    ze_memory_access_cap_flags_t all = ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
                                       ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT |
                                       ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
    p->hostAllocCapabilities = all;
    p->deviceAllocCapabilities = all;
    p->sharedSingleDeviceAllocCapabilities = all;
    p->sharedCrossDeviceAllocCapabilities = all;
    p->sharedSystemAllocCapabilities = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_cache_properties(ze_device_handle_t hDevice, uint32_t *pCount,
                                                                ze_device_cache_properties_t *p)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    (void)dev;
    CGSIM_CHECK_PTR(pCount);
    if (*pCount == 0 || p == NULL) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    p[0].flags = 0;
    p[0].cacheSize = 4u << 20;
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_can_access_peer(ze_device_handle_t hDevice, ze_device_handle_t hPeer,
                                                           ze_bool_t *value)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    CGSIM_CHECK_HANDLE(peer, struct cgsim_device, hPeer, CGSIM_KIND_DEVICE);
    (void)dev;
    (void)peer;
    CGSIM_CHECK_PTR(value);
    *value = 1; /* all simulated devices share host memory */
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_status(ze_device_handle_t hDevice)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    (void)dev;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_device_get_global_timestamps(ze_device_handle_t hDevice, uint64_t *hostTimestamp,
                                                                 uint64_t *deviceTimestamp)
{
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    (void)dev;
    CGSIM_CHECK_PTR(hostTimestamp);
    CGSIM_CHECK_PTR(deviceTimestamp);
    *hostTimestamp = *deviceTimestamp = cgsim_now_ns();
    return ZE_RESULT_SUCCESS;
}

void cgsim_fill_device_table(ze_device_dditable_t *t)
{
    t->pfnGet = cgsim_device_get;
    t->pfnGetSubDevices = cgsim_device_get_sub_devices;
    t->pfnGetProperties = cgsim_device_get_properties;
    t->pfnGetComputeProperties = cgsim_device_get_compute_properties;
    t->pfnGetModuleProperties = cgsim_device_get_module_properties;
    t->pfnGetCommandQueueGroupProperties = cgsim_device_get_queue_groups;
    t->pfnGetMemoryProperties = cgsim_device_get_memory_properties;
    t->pfnGetMemoryAccessProperties = cgsim_device_get_memory_access_properties;
    t->pfnGetCacheProperties = cgsim_device_get_cache_properties;
    t->pfnCanAccessPeer = cgsim_device_can_access_peer;
    t->pfnGetStatus = cgsim_device_get_status;
    t->pfnGetGlobalTimestamps = cgsim_device_get_global_timestamps;
}

/* ---- contexts ----------------------------------------------------------------------------------------------- */

static ze_result_t ZE_APICALL cgsim_context_create_ex(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
                                                      uint32_t numDevices, ze_device_handle_t *phDevices,
                                                      ze_context_handle_t *phContext)
{
    CGSIM_CHECK_HANDLE(drv, struct cgsim_driver, hDriver, CGSIM_KIND_DRIVER);
    CGSIM_CHECK_PTR(desc);
    CGSIM_CHECK_PTR(phContext);
    if (desc->flags & ~(ze_context_flags_t)ZE_CONTEXT_FLAG_TBD) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (numDevices > 0 && phDevices == NULL) return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < numDevices; i++)
        if (!cgsim_handle_lookup(phDevices[i], CGSIM_KIND_DEVICE))
            return phDevices[i] ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct cgsim_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    cgsim_object_init(&ctx->hdr, CGSIM_KIND_CONTEXT);
    ctx->driver = drv;
    if (!cgsim_handle_register(&ctx->hdr)) {
        free(ctx);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *phContext = (ze_context_handle_t)ctx;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_context_create(ze_driver_handle_t hDriver, const ze_context_desc_t *desc,
                                                   ze_context_handle_t *phContext)
{
    return cgsim_context_create_ex(hDriver, desc, 0, NULL, phContext);
}

static ze_result_t ZE_APICALL cgsim_context_destroy(ze_context_handle_t hContext)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    cgsim_handle_unregister(&ctx->hdr);
    free(ctx);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_context_get_status(ze_context_handle_t hContext)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    (void)ctx;
    return ZE_RESULT_SUCCESS;
}

void cgsim_fill_context_table(ze_context_dditable_t *t)
{
    t->pfnCreate = cgsim_context_create;
    t->pfnCreateEx = cgsim_context_create_ex;
    t->pfnDestroy = cgsim_context_destroy;
    t->pfnGetStatus = cgsim_context_get_status;
}
