/*
 * Memory allocations.
 *
 * Host, device and shared allocations are all host memory (aligned_alloc) in the simulator, which is what makes
 * zeCommandListAppendMemoryCopy a plain memcpy. Allocations are tracked so that zeMemFree and
 * zeMemGetAddressRange can refuse pointers the simulator never handed out; a linear list is plenty for the
 * allocation counts a test program makes.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define CGSIM_DEFAULT_ALIGNMENT 64u
#define CGSIM_PAGE_SIZE 4096u
#define CGSIM_MAX_ALLOC (1ull << 32) /* matches ze_device_properties_t::maxMemAllocSize */

struct allocation {
    struct allocation *next;
    struct cgsim_context *context;
    struct cgsim_device *device; /* NULL for host allocations */
    ze_memory_type_t type;
    uint64_t id;
    char *base;
    size_t size;
};

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct allocation *allocations;
static uint64_t next_id = 1;

/* Caller holds alloc_lock. Finds the allocation containing ptr (interior pointers included). */
static struct allocation *find_containing(const void *ptr)
{
    const char *p = ptr;
    for (struct allocation *a = allocations; a; a = a->next)
        if (p >= a->base && p < a->base + a->size) return a;
    return NULL;
}

static ze_result_t do_alloc(struct cgsim_context *ctx, struct cgsim_device *dev, ze_memory_type_t type, size_t size,
                            size_t alignment, void **pptr)
{
    if (size == 0 || size > CGSIM_MAX_ALLOC) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (alignment != 0 && (alignment & (alignment - 1)) != 0) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    if (alignment < CGSIM_DEFAULT_ALIGNMENT) alignment = CGSIM_DEFAULT_ALIGNMENT;
    /* aligned_alloc wants the size to be a multiple of the alignment. */
    size_t rounded = (size + alignment - 1) & ~(alignment - 1);
    struct allocation *a = malloc(sizeof *a);
    char *mem = aligned_alloc(alignment, rounded);
    if (!a || !mem) {
        free(a);
        free(mem);
        return type == ZE_MEMORY_TYPE_HOST ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY : ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    a->context = ctx;
    a->device = dev;
    a->type = type;
    a->base = mem;
    a->size = size;
    pthread_mutex_lock(&alloc_lock);
    a->id = next_id++;
    a->next = allocations;
    allocations = a;
    pthread_mutex_unlock(&alloc_lock);
    *pptr = mem;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_mem_alloc_shared(ze_context_handle_t hContext,
                                                     const ze_device_mem_alloc_desc_t *device_desc,
                                                     const ze_host_mem_alloc_desc_t *host_desc, size_t size,
                                                     size_t alignment, ze_device_handle_t hDevice, void **pptr)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    struct cgsim_device *dev = NULL;
    if (hDevice != NULL && !(dev = cgsim_handle_lookup(hDevice, CGSIM_KIND_DEVICE)))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    CGSIM_CHECK_PTR(device_desc);
    CGSIM_CHECK_PTR(host_desc);
    CGSIM_CHECK_PTR(pptr);
    return do_alloc(ctx, dev, ZE_MEMORY_TYPE_SHARED, size, alignment, pptr);
}

static ze_result_t ZE_APICALL cgsim_mem_alloc_device(ze_context_handle_t hContext,
                                                     const ze_device_mem_alloc_desc_t *device_desc, size_t size,
                                                     size_t alignment, ze_device_handle_t hDevice, void **pptr)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    CGSIM_CHECK_PTR(device_desc);
    CGSIM_CHECK_PTR(pptr);
    return do_alloc(ctx, dev, ZE_MEMORY_TYPE_DEVICE, size, alignment, pptr);
}

static ze_result_t ZE_APICALL cgsim_mem_alloc_host(ze_context_handle_t hContext,
                                                   const ze_host_mem_alloc_desc_t *host_desc, size_t size,
                                                   size_t alignment, void **pptr)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    CGSIM_CHECK_PTR(host_desc);
    CGSIM_CHECK_PTR(pptr);
    return do_alloc(ctx, NULL, ZE_MEMORY_TYPE_HOST, size, alignment, pptr);
}

static ze_result_t ZE_APICALL cgsim_mem_free(ze_context_handle_t hContext, void *ptr)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    (void)ctx;
    CGSIM_CHECK_PTR(ptr);
    pthread_mutex_lock(&alloc_lock);
    struct allocation **link = &allocations;
    while (*link && (*link)->base != ptr)
        link = &(*link)->next;
    struct allocation *a = *link;
    if (a) *link = a->next;
    pthread_mutex_unlock(&alloc_lock);
    /* Only the exact base pointer of a live allocation may be freed. */
    if (!a) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    free(a->base);
    free(a);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_mem_get_alloc_properties(ze_context_handle_t hContext, const void *ptr,
                                                             ze_memory_allocation_properties_t *props,
                                                             ze_device_handle_t *phDevice)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    (void)ctx;
    CGSIM_CHECK_PTR(ptr);
    CGSIM_CHECK_PTR(props);
    pthread_mutex_lock(&alloc_lock);
    struct allocation *a = find_containing(ptr);
    /* Per the spec, a pointer that is not a Level Zero allocation is not an error: it reports type UNKNOWN. */
    props->type = a ? a->type : ZE_MEMORY_TYPE_UNKNOWN;
    props->id = a ? a->id : 0;
    props->pageSize = a ? CGSIM_PAGE_SIZE : 0;
    if (phDevice) *phDevice = a ? (ze_device_handle_t)a->device : NULL;
    pthread_mutex_unlock(&alloc_lock);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_mem_get_address_range(ze_context_handle_t hContext, const void *ptr, void **pBase,
                                                          size_t *pSize)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    (void)ctx;
    CGSIM_CHECK_PTR(ptr);
    pthread_mutex_lock(&alloc_lock);
    struct allocation *a = find_containing(ptr);
    if (a) {
        if (pBase) *pBase = a->base;
        if (pSize) *pSize = a->size;
    }
    pthread_mutex_unlock(&alloc_lock);
    return a ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

void cgsim_fill_mem_table(ze_mem_dditable_t *t)
{
    t->pfnAllocShared = cgsim_mem_alloc_shared;
    t->pfnAllocDevice = cgsim_mem_alloc_device;
    t->pfnAllocHost = cgsim_mem_alloc_host;
    t->pfnFree = cgsim_mem_free;
    t->pfnGetAllocProperties = cgsim_mem_get_alloc_properties;
    t->pfnGetAddressRange = cgsim_mem_get_address_range;
}
