/*
 * Event pools, events and fences.
 *
 * Each event and fence has its own mutex and a CLOCK_MONOTONIC condition variable, so zeEventHostSynchronize and
 * zeFenceHostSynchronize block for real (no polling) and give up with ZE_RESULT_NOT_READY when the timeout passes.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- event pools -------------------------------------------------------------------------------------------- */

static ze_result_t ZE_APICALL cgsim_event_pool_create(ze_context_handle_t hContext, const ze_event_pool_desc_t *desc,
                                                      uint32_t numDevices, ze_device_handle_t *phDevices,
                                                      ze_event_pool_handle_t *phEventPool)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    CGSIM_CHECK_PTR(desc);
    CGSIM_CHECK_PTR(phEventPool);
    const ze_event_pool_flags_t known =
        ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_IPC | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
    if (desc->flags & ~known) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (numDevices > 0 && phDevices == NULL) return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < numDevices; i++)
        if (!cgsim_handle_lookup(phDevices[i], CGSIM_KIND_DEVICE))
            return phDevices[i] ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;

    struct cgsim_event_pool *pool = calloc(1, sizeof *pool);
    bool *used = calloc(desc->count, sizeof *used);
    if (!pool || !used) {
        free(pool);
        free(used);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    cgsim_object_init(&pool->hdr, CGSIM_KIND_EVENT_POOL);
    pool->context = ctx;
    pool->flags = desc->flags;
    pool->count = desc->count;
    pool->used = used;
    pthread_mutex_init(&pool->lock, NULL);
    if (!cgsim_handle_register(&pool->hdr)) {
        free(used);
        free(pool);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *phEventPool = (ze_event_pool_handle_t)pool;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_event_pool_destroy(ze_event_pool_handle_t hEventPool)
{
    CGSIM_CHECK_HANDLE(pool, struct cgsim_event_pool, hEventPool, CGSIM_KIND_EVENT_POOL);
    pthread_mutex_lock(&pool->lock);
    uint32_t live = pool->live_events;
    pthread_mutex_unlock(&pool->lock);
    /* The spec requires events to be destroyed first; refusing keeps events from pointing at a freed pool. */
    if (live > 0) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    cgsim_handle_unregister(&pool->hdr);
    pthread_mutex_destroy(&pool->lock);
    free(pool->used);
    free(pool);
    return ZE_RESULT_SUCCESS;
}

/* ---- events ------------------------------------------------------------------------------------------------- */

static ze_result_t ZE_APICALL cgsim_event_create(ze_event_pool_handle_t hEventPool, const ze_event_desc_t *desc,
                                                 ze_event_handle_t *phEvent)
{
    CGSIM_CHECK_HANDLE(pool, struct cgsim_event_pool, hEventPool, CGSIM_KIND_EVENT_POOL);
    CGSIM_CHECK_PTR(desc);
    CGSIM_CHECK_PTR(phEvent);
    const ze_event_scope_flags_t scopes =
        ZE_EVENT_SCOPE_FLAG_SUBDEVICE | ZE_EVENT_SCOPE_FLAG_DEVICE | ZE_EVENT_SCOPE_FLAG_HOST;
    if ((desc->signal & ~scopes) || (desc->wait & ~scopes)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->index >= pool->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;

    struct cgsim_event *ev = calloc(1, sizeof *ev);
    if (!ev) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    pthread_mutex_lock(&pool->lock);
    bool taken = pool->used[desc->index];
    if (!taken) {
        pool->used[desc->index] = true;
        pool->live_events++;
    }
    pthread_mutex_unlock(&pool->lock);
    if (taken) { /* two live events on one pool slot would share state on real hardware */
        free(ev);
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    cgsim_object_init(&ev->hdr, CGSIM_KIND_EVENT);
    ev->pool = pool;
    ev->index = desc->index;
    pthread_mutex_init(&ev->lock, NULL);
    cgsim_cond_init_monotonic(&ev->cond);
    if (!cgsim_handle_register(&ev->hdr)) {
        pthread_mutex_lock(&pool->lock);
        pool->used[desc->index] = false;
        pool->live_events--;
        pthread_mutex_unlock(&pool->lock);
        free(ev);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *phEvent = (ze_event_handle_t)ev;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_event_destroy(ze_event_handle_t hEvent)
{
    CGSIM_CHECK_HANDLE(ev, struct cgsim_event, hEvent, CGSIM_KIND_EVENT);
    cgsim_handle_unregister(&ev->hdr);
    struct cgsim_event_pool *pool = ev->pool;
    pthread_mutex_lock(&pool->lock);
    pool->used[ev->index] = false;
    pool->live_events--;
    pthread_mutex_unlock(&pool->lock);
    pthread_cond_destroy(&ev->cond);
    pthread_mutex_destroy(&ev->lock);
    free(ev);
    return ZE_RESULT_SUCCESS;
}

void cgsim_event_signal(struct cgsim_event *ev)
{
    pthread_mutex_lock(&ev->lock);
    ev->signaled = true;
    pthread_cond_broadcast(&ev->cond);
    pthread_mutex_unlock(&ev->lock);
}

void cgsim_event_signal_kernel(struct cgsim_event *ev, uint64_t start_ns, uint64_t end_ns)
{
    pthread_mutex_lock(&ev->lock);
    ev->ts_start = start_ns;
    ev->ts_end = end_ns;
    ev->has_timestamp = true;
    ev->signaled = true;
    pthread_cond_broadcast(&ev->cond);
    pthread_mutex_unlock(&ev->lock);
}

void cgsim_event_reset(struct cgsim_event *ev)
{
    pthread_mutex_lock(&ev->lock);
    ev->signaled = false;
    ev->has_timestamp = false;
    pthread_mutex_unlock(&ev->lock);
}

void cgsim_event_wait_interruptible(struct cgsim_event *ev, const bool *stop, pthread_mutex_t *stop_lock)
{
    for (;;) {
        pthread_mutex_lock(stop_lock);
        bool stopping = *stop;
        pthread_mutex_unlock(stop_lock);
        if (stopping) return;
        /* Wait in slices so that destroying the queue can interrupt a wait for an event nobody signals. */
        struct cgsim_deadline d = cgsim_deadline_after(10 * 1000 * 1000);
        pthread_mutex_lock(&ev->lock);
        while (!ev->signaled && cgsim_cond_wait_until(&ev->cond, &ev->lock, &d)) {}
        bool done = ev->signaled;
        pthread_mutex_unlock(&ev->lock);
        if (done) return;
    }
}

static ze_result_t ZE_APICALL cgsim_event_host_signal(ze_event_handle_t hEvent)
{
    CGSIM_CHECK_HANDLE(ev, struct cgsim_event, hEvent, CGSIM_KIND_EVENT);
    cgsim_event_signal(ev);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_event_host_reset(ze_event_handle_t hEvent)
{
    CGSIM_CHECK_HANDLE(ev, struct cgsim_event, hEvent, CGSIM_KIND_EVENT);
    cgsim_event_reset(ev);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_event_host_synchronize(ze_event_handle_t hEvent, uint64_t timeout)
{
    CGSIM_CHECK_HANDLE(ev, struct cgsim_event, hEvent, CGSIM_KIND_EVENT);
    struct cgsim_deadline d = cgsim_deadline_after(timeout);
    pthread_mutex_lock(&ev->lock);
    while (!ev->signaled && cgsim_cond_wait_until(&ev->cond, &ev->lock, &d)) {}
    bool signaled = ev->signaled;
    pthread_mutex_unlock(&ev->lock);
    return signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL cgsim_event_query_status(ze_event_handle_t hEvent)
{
    CGSIM_CHECK_HANDLE(ev, struct cgsim_event, hEvent, CGSIM_KIND_EVENT);
    pthread_mutex_lock(&ev->lock);
    bool signaled = ev->signaled;
    pthread_mutex_unlock(&ev->lock);
    return signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL cgsim_event_query_kernel_timestamp(ze_event_handle_t hEvent,
                                                                 ze_kernel_timestamp_result_t *dst)
{
    CGSIM_CHECK_HANDLE(ev, struct cgsim_event, hEvent, CGSIM_KIND_EVENT);
    CGSIM_CHECK_PTR(dst);
    if (!(ev->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&ev->lock);
    bool ready = ev->signaled;
    /* An event signalled by something other than a kernel (host, barrier) reports a zero-length interval. */
    uint64_t start = ev->has_timestamp ? ev->ts_start : 0;
    uint64_t end = ev->has_timestamp ? ev->ts_end : 0;
    pthread_mutex_unlock(&ev->lock);
    if (!ready) return ZE_RESULT_NOT_READY;
    dst->global.kernelStart = dst->context.kernelStart = start;
    dst->global.kernelEnd = dst->context.kernelEnd = end;
    return ZE_RESULT_SUCCESS;
}

void cgsim_fill_event_pool_table(ze_event_pool_dditable_t *t)
{
    t->pfnCreate = cgsim_event_pool_create;
    t->pfnDestroy = cgsim_event_pool_destroy;
}

void cgsim_fill_event_table(ze_event_dditable_t *t)
{
    t->pfnCreate = cgsim_event_create;
    t->pfnDestroy = cgsim_event_destroy;
    t->pfnHostSignal = cgsim_event_host_signal;
    t->pfnHostSynchronize = cgsim_event_host_synchronize;
    t->pfnQueryStatus = cgsim_event_query_status;
    t->pfnHostReset = cgsim_event_host_reset;
    t->pfnQueryKernelTimestamp = cgsim_event_query_kernel_timestamp;
}

/* ---- fences ------------------------------------------------------------------------------------------------- */

static ze_result_t ZE_APICALL cgsim_fence_create(ze_command_queue_handle_t hCommandQueue, const ze_fence_desc_t *desc,
                                                 ze_fence_handle_t *phFence)
{
    CGSIM_CHECK_HANDLE(queue, struct cgsim_queue, hCommandQueue, CGSIM_KIND_QUEUE);
    CGSIM_CHECK_PTR(desc);
    CGSIM_CHECK_PTR(phFence);
    if (desc->flags & ~(ze_fence_flags_t)ZE_FENCE_FLAG_SIGNALED) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    struct cgsim_fence *fence = calloc(1, sizeof *fence);
    if (!fence) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    cgsim_object_init(&fence->hdr, CGSIM_KIND_FENCE);
    fence->queue = queue;
    fence->signaled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0;
    pthread_mutex_init(&fence->lock, NULL);
    cgsim_cond_init_monotonic(&fence->cond);
    if (!cgsim_handle_register(&fence->hdr)) {
        free(fence);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *phFence = (ze_fence_handle_t)fence;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_fence_destroy(ze_fence_handle_t hFence)
{
    CGSIM_CHECK_HANDLE(fence, struct cgsim_fence, hFence, CGSIM_KIND_FENCE);
    cgsim_handle_unregister(&fence->hdr);
    pthread_cond_destroy(&fence->cond);
    pthread_mutex_destroy(&fence->lock);
    free(fence);
    return ZE_RESULT_SUCCESS;
}

void cgsim_fence_signal(struct cgsim_fence *fence)
{
    pthread_mutex_lock(&fence->lock);
    fence->signaled = true;
    pthread_cond_broadcast(&fence->cond);
    pthread_mutex_unlock(&fence->lock);
}

static ze_result_t ZE_APICALL cgsim_fence_host_synchronize(ze_fence_handle_t hFence, uint64_t timeout)
{
    CGSIM_CHECK_HANDLE(fence, struct cgsim_fence, hFence, CGSIM_KIND_FENCE);
    struct cgsim_deadline d = cgsim_deadline_after(timeout);
    pthread_mutex_lock(&fence->lock);
    while (!fence->signaled && cgsim_cond_wait_until(&fence->cond, &fence->lock, &d)) {}
    bool signaled = fence->signaled;
    pthread_mutex_unlock(&fence->lock);
    return signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t ZE_APICALL cgsim_fence_query_status(ze_fence_handle_t hFence)
{
    return cgsim_fence_host_synchronize(hFence, 0);
}

static ze_result_t ZE_APICALL cgsim_fence_reset(ze_fence_handle_t hFence)
{
    CGSIM_CHECK_HANDLE(fence, struct cgsim_fence, hFence, CGSIM_KIND_FENCE);
    pthread_mutex_lock(&fence->lock);
    fence->signaled = false;
    pthread_mutex_unlock(&fence->lock);
    return ZE_RESULT_SUCCESS;
}

void cgsim_fill_fence_table(ze_fence_dditable_t *t)
{
    t->pfnCreate = cgsim_fence_create;
    t->pfnDestroy = cgsim_fence_destroy;
    t->pfnHostSynchronize = cgsim_fence_host_synchronize;
    t->pfnQueryStatus = cgsim_fence_query_status;
    t->pfnReset = cgsim_fence_reset;
}
