/*
 * Kernels of a module (module.c): created by name, their group sizes, arguments, indirect access and the
 * properties the module's input gave them (docs/zesim.md).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static ze_result_t ZE_APICALL cgsim_kernel_create(ze_module_handle_t hModule, const ze_kernel_desc_t *desc,
                                                  ze_kernel_handle_t *phKernel)
{
    CGSIM_CHECK_HANDLE(mod, struct cgsim_module, hModule, CGSIM_KIND_MODULE);
    CGSIM_CHECK_PTR(desc);
    CGSIM_CHECK_PTR(desc->pKernelName);
    CGSIM_CHECK_PTR(phKernel);
    if (desc->flags & ~(ze_kernel_flags_t)(ZE_KERNEL_FLAG_FORCE_RESIDENCY | ZE_KERNEL_FLAG_EXPLICIT_RESIDENCY))
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    const struct cgsim_kernel_info *info = NULL;
    for (uint32_t i = 0; i < mod->kernel_count && !info; i++)
        if (strcmp(mod->kernels[i].name, desc->pKernelName) == 0) info = &mod->kernels[i];
    if (!info) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    if (info->slm_bytes > CGSIM_SHARED_LOCAL_MEMORY)
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY; /* more shared local memory than the device has */
    struct cgsim_kernel *k = calloc(1, sizeof *k);
    if (!k) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    cgsim_object_init(&k->hdr, CGSIM_KIND_KERNEL);
    k->module = mod;
    k->info = info;
    k->group_size[0] = k->group_size[1] = k->group_size[2] = 1;
    if (!cgsim_handle_register(&k->hdr)) {
        free(k);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    atomic_fetch_add(&mod->live_kernels, 1);
    *phKernel = (ze_kernel_handle_t)k;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_kernel_destroy(ze_kernel_handle_t hKernel)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    cgsim_handle_unregister(&k->hdr);
    atomic_fetch_sub(&k->module->live_kernels, 1);
    free(k);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_kernel_set_cache_config(ze_kernel_handle_t hKernel, ze_cache_config_flags_t flags)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    (void)k;
    if (flags & ~(ze_cache_config_flags_t)(ZE_CACHE_CONFIG_FLAG_LARGE_SLM | ZE_CACHE_CONFIG_FLAG_LARGE_DATA))
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    return ZE_RESULT_SUCCESS;
}

/* Same limits as cgsim_device_get_compute_properties reports. */
static bool group_size_ok(uint32_t x, uint32_t y, uint32_t z)
{
    return x >= 1 && y >= 1 && z >= 1 && x <= 1024 && y <= 1024 && z <= 64 && (uint64_t)x * y * z <= 1024;
}

static ze_result_t ZE_APICALL cgsim_kernel_set_group_size(ze_kernel_handle_t hKernel, uint32_t x, uint32_t y,
                                                          uint32_t z)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    if (!group_size_ok(x, y, z)) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    k->group_size[0] = x;
    k->group_size[1] = y;
    k->group_size[2] = z;
    return ZE_RESULT_SUCCESS;
}

static uint32_t largest_divisor_at_most(uint32_t n, uint32_t limit)
{
    for (uint32_t d = limit < n ? limit : n; d > 1; d--)
        if (n % d == 0) return d;
    return 1;
}

static ze_result_t ZE_APICALL cgsim_kernel_suggest_group_size(ze_kernel_handle_t hKernel, uint32_t gx, uint32_t gy,
                                                              uint32_t gz, uint32_t *x, uint32_t *y, uint32_t *z)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    (void)k;
    CGSIM_CHECK_PTR(x);
    CGSIM_CHECK_PTR(y);
    CGSIM_CHECK_PTR(z);
    if (gx == 0 || gy == 0 || gz == 0) return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
    /* Group sizes that divide the global size exactly, at most 256 items per group. */
    *x = largest_divisor_at_most(gx, 256);
    *y = largest_divisor_at_most(gy, 256 / *x);
    uint32_t zlimit = 256 / (*x * *y);
    *z = largest_divisor_at_most(gz, zlimit < 64 ? zlimit : 64);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_kernel_suggest_max_cooperative_group_count(ze_kernel_handle_t hKernel,
                                                                               uint32_t *totalGroupCount)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    (void)k;
    CGSIM_CHECK_PTR(totalGroupCount);
    *totalGroupCount = 32; /* EUs per device: 4 subslices x 8 EUs */
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_kernel_set_argument_value(ze_kernel_handle_t hKernel, uint32_t argIndex,
                                                              size_t argSize, const void *pArgValue)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    (void)pArgValue; /* may be NULL: a NULL pointer argument or local memory of argSize bytes */
    if (argIndex >= k->info->num_args) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    if (argSize == 0 || argSize > 2048) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    if (argIndex < 64) k->args_set |= 1ull << argIndex;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_kernel_set_indirect_access(ze_kernel_handle_t hKernel,
                                                               ze_kernel_indirect_access_flags_t flags)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    const ze_kernel_indirect_access_flags_t known = ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST |
                                                    ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE |
                                                    ZE_KERNEL_INDIRECT_ACCESS_FLAG_SHARED;
    if (flags & ~known) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    k->indirect_access = flags;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_kernel_get_indirect_access(ze_kernel_handle_t hKernel,
                                                               ze_kernel_indirect_access_flags_t *pFlags)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    CGSIM_CHECK_PTR(pFlags);
    *pFlags = k->indirect_access;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_kernel_get_properties(ze_kernel_handle_t hKernel, ze_kernel_properties_t *p)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    CGSIM_CHECK_PTR(p);
    const struct cgsim_kernel_info *info = k->info;
    p->numKernelArgs = info->num_args;
    p->requiredGroupSizeX = p->requiredGroupSizeY = p->requiredGroupSizeZ = 0;
    p->requiredNumSubGroups = 0;
    p->requiredSubgroupSize = 0;
    p->maxSubgroupSize = 32;
    p->maxNumSubgroups = 32;
    p->localMemSize = info->slm_bytes;
    p->privateMemSize = info->private_bytes;
    p->spillMemSize = info->spill_bytes;
    /* UUID: kernel index and module id, so distinct kernels never compare equal. */
    memset(&p->uuid, 0, sizeof p->uuid);
    uint32_t index = (uint32_t)(info - k->module->kernels);
    memcpy(p->uuid.kid, &index, sizeof index);
    memcpy(p->uuid.mid, &k->module->id, sizeof k->module->id);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_kernel_get_name(ze_kernel_handle_t hKernel, size_t *pSize, char *pName)
{
    CGSIM_CHECK_HANDLE(k, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    CGSIM_CHECK_PTR(pSize);
    size_t need = strlen(k->info->name) + 1;
    if (pName == NULL || *pSize == 0) {
        *pSize = need;
        return ZE_RESULT_SUCCESS;
    }
    size_t n = *pSize < need ? *pSize : need;
    memcpy(pName, k->info->name, n - 1);
    pName[n - 1] = '\0';
    *pSize = n;
    return ZE_RESULT_SUCCESS;
}

void cgsim_fill_kernel_table(ze_kernel_dditable_t *t)
{
    t->pfnCreate = cgsim_kernel_create;
    t->pfnDestroy = cgsim_kernel_destroy;
    t->pfnSetCacheConfig = cgsim_kernel_set_cache_config;
    t->pfnSetGroupSize = cgsim_kernel_set_group_size;
    t->pfnSuggestGroupSize = cgsim_kernel_suggest_group_size;
    t->pfnSuggestMaxCooperativeGroupCount = cgsim_kernel_suggest_max_cooperative_group_count;
    t->pfnSetArgumentValue = cgsim_kernel_set_argument_value;
    t->pfnSetIndirectAccess = cgsim_kernel_set_indirect_access;
    t->pfnGetIndirectAccess = cgsim_kernel_get_indirect_access;
    t->pfnGetProperties = cgsim_kernel_get_properties;
    t->pfnGetName = cgsim_kernel_get_name;
}
