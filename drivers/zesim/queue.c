/*
 * Command queues and command lists.
 *
 * A command list records commands; zeCommandQueueExecuteCommandLists copies them into a batch for the queue's
 * worker thread, which plays the device: it waits on events, "runs" kernels by sleeping CGSIM_KERNEL_US, does
 * copies and fills with memmove/memcpy, and signals events and the fence when the work is done. One worker per
 * queue gives in-order execution, which is what makes a barrier a no-op apart from its events.
 *
 * An immediate command list owns a private queue; each append is submitted to it at once (and waited for when the
 * list was created with ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define CGSIM_QUEUES_PER_GROUP 4u /* matches zeDeviceGetCommandQueueGroupProperties */
#define CGSIM_WAIT_SLICE_US 10000u

/* Live queues, so that the library destructor can stop their workers before the process tears down. */
static pthread_mutex_t queues_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cgsim_queue **live_queues;
static size_t live_queue_count;
static size_t live_queue_cap;

/* ---- command vectors ---------------------------------------------------------------------------------------- */

static void cmd_free(struct cgsim_cmd *cmd)
{
    free(cmd->waits);
    cmd->waits = NULL;
}

void cgsim_cmd_vec_free(struct cgsim_cmd_vec *vec)
{
    for (size_t i = 0; i < vec->count; i++)
        cmd_free(&vec->items[i]);
    free(vec->items);
    memset(vec, 0, sizeof *vec);
}

/* Appends a copy of cmd, duplicating its wait list. */
static bool cmd_vec_push(struct cgsim_cmd_vec *vec, const struct cgsim_cmd *cmd)
{
    if (vec->count == vec->capacity) {
        size_t cap = vec->capacity ? vec->capacity * 2 : 16;
        struct cgsim_cmd *grown = realloc(vec->items, cap * sizeof *grown);
        if (!grown) return false;
        vec->items = grown;
        vec->capacity = cap;
    }
    struct cgsim_cmd copy = *cmd;
    copy.waits = NULL; /* cmd->waits belongs to the caller (possibly the loader's zero-length array) */
    if (cmd->num_waits) {
        copy.waits = malloc(cmd->num_waits * sizeof *copy.waits);
        if (!copy.waits) return false;
        memcpy(copy.waits, cmd->waits, cmd->num_waits * sizeof *copy.waits);
    }
    vec->items[vec->count++] = copy;
    return true;
}

/* ---- the worker: executing commands ------------------------------------------------------------------------- */

static bool queue_stopping(struct cgsim_queue *q)
{
    pthread_mutex_lock(&q->lock);
    bool stop = q->stop;
    pthread_mutex_unlock(&q->lock);
    return stop;
}

/* Sleeps in slices so that destroying the queue does not have to wait for a long simulated kernel. */
static void sleep_interruptible(struct cgsim_queue *q, uint64_t us)
{
    while (us > 0 && !queue_stopping(q)) {
        uint64_t slice = us < CGSIM_WAIT_SLICE_US ? us : CGSIM_WAIT_SLICE_US;
        cgsim_sleep_us(slice);
        us -= slice;
    }
}

static void fill_pattern(void *dst, const uint8_t *pattern, size_t pattern_size, size_t size)
{
    uint8_t *d = dst;
    for (size_t i = 0; i < size; i++)
        d[i] = pattern[i % pattern_size];
}

static void run_cmd(struct cgsim_queue *q, const struct cgsim_cmd *cmd)
{
    /* Events are re-validated at execution time: an application may have destroyed one since recording. */
    for (uint32_t i = 0; i < cmd->num_waits; i++) {
        struct cgsim_event *ev = cgsim_handle_lookup(cmd->waits[i], CGSIM_KIND_EVENT);
        if (ev) cgsim_event_wait_interruptible(ev, &q->stop, &q->lock);
    }
    uint64_t start = cgsim_now_ns();
    switch (cmd->kind) {
    case CGSIM_CMD_LAUNCH: sleep_interruptible(q, cmd->duration_us); break;
    case CGSIM_CMD_COPY: memmove(cmd->dst, cmd->src, cmd->size); break;
    case CGSIM_CMD_FILL: fill_pattern(cmd->dst, cmd->pattern, cmd->size_pattern, cmd->size); break;
    case CGSIM_CMD_RESET: {
        struct cgsim_event *target = cgsim_handle_lookup(cmd->target, CGSIM_KIND_EVENT);
        if (target) cgsim_event_reset(target);
        break;
    }
    case CGSIM_CMD_BARRIER:
    case CGSIM_CMD_SIGNAL:
    case CGSIM_CMD_WAIT: break;
    }
    struct cgsim_event *signal = cgsim_handle_lookup(cmd->signal, CGSIM_KIND_EVENT);
    if (signal) {
        if (cmd->kind == CGSIM_CMD_LAUNCH)
            cgsim_event_signal_kernel(signal, start, cgsim_now_ns());
        else
            cgsim_event_signal(signal);
    }
}

static void *worker_main(void *arg)
{
    struct cgsim_queue *q = arg;
    pthread_mutex_lock(&q->lock);
    for (;;) {
        while (!q->stop && q->head == NULL)
            pthread_cond_wait(&q->cond, &q->lock);
        if (q->stop) break;
        struct cgsim_batch *batch = q->head;
        q->head = batch->next;
        if (!q->head) q->tail = NULL;
        pthread_mutex_unlock(&q->lock);

        for (size_t i = 0; i < batch->cmds.count && !queue_stopping(q); i++)
            run_cmd(q, &batch->cmds.items[i]);
        struct cgsim_fence *fence = cgsim_handle_lookup(batch->fence, CGSIM_KIND_FENCE);
        if (fence) cgsim_fence_signal(fence);
        cgsim_cmd_vec_free(&batch->cmds);
        free(batch);

        pthread_mutex_lock(&q->lock);
        q->completed++;
        pthread_cond_broadcast(&q->cond);
    }
    pthread_mutex_unlock(&q->lock);
    return NULL;
}

/* ---- queues ------------------------------------------------------------------------------------------------- */

static void track_queue(struct cgsim_queue *q, bool add)
{
    pthread_mutex_lock(&queues_lock);
    if (add) {
        if (live_queue_count == live_queue_cap) {
            size_t cap = live_queue_cap ? live_queue_cap * 2 : 16;
            struct cgsim_queue **grown = realloc(live_queues, cap * sizeof *grown);
            if (grown) {
                live_queues = grown;
                live_queue_cap = cap;
            }
        }
        if (live_queue_count < live_queue_cap) live_queues[live_queue_count++] = q;
    } else {
        for (size_t i = 0; i < live_queue_count; i++) {
            if (live_queues[i] == q) {
                live_queues[i] = live_queues[--live_queue_count];
                break;
            }
        }
    }
    pthread_mutex_unlock(&queues_lock);
}

ze_result_t cgsim_queue_create_internal(struct cgsim_context *ctx, struct cgsim_device *dev, bool synchronous,
                                        struct cgsim_queue **out)
{
    struct cgsim_queue *q = calloc(1, sizeof *q);
    if (!q) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    cgsim_object_init(&q->hdr, CGSIM_KIND_QUEUE);
    q->context = ctx;
    q->device = dev;
    q->synchronous = synchronous;
    pthread_mutex_init(&q->lock, NULL);
    cgsim_cond_init_monotonic(&q->cond);
    if (pthread_create(&q->worker, NULL, worker_main, q) != 0) {
        pthread_cond_destroy(&q->cond);
        pthread_mutex_destroy(&q->lock);
        free(q);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    track_queue(q, true);
    *out = q;
    return ZE_RESULT_SUCCESS;
}

/* Stops the worker (abandoning queued work, which the spec says must not exist at destroy time) and frees. */
static void stop_worker(struct cgsim_queue *q)
{
    pthread_mutex_lock(&q->lock);
    bool already = q->stop;
    q->stop = true;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
    if (!already) pthread_join(q->worker, NULL);
}

void cgsim_queue_destroy_internal(struct cgsim_queue *q)
{
    track_queue(q, false);
    stop_worker(q);
    for (struct cgsim_batch *b = q->head, *next; b; b = next) {
        next = b->next;
        cgsim_cmd_vec_free(&b->cmds);
        free(b);
    }
    pthread_cond_destroy(&q->cond);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

ze_result_t cgsim_queue_submit(struct cgsim_queue *q, struct cgsim_cmd_vec *cmds, struct cgsim_fence *fence)
{
    struct cgsim_batch *batch = calloc(1, sizeof *batch);
    if (!batch) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    batch->cmds = *cmds;
    memset(cmds, 0, sizeof *cmds);
    batch->fence = fence;
    pthread_mutex_lock(&q->lock);
    if (q->tail)
        q->tail->next = batch;
    else
        q->head = batch;
    q->tail = batch;
    q->submitted++;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
    if (q->synchronous) return cgsim_queue_wait_idle(q, UINT64_MAX);
    return ZE_RESULT_SUCCESS;
}

ze_result_t cgsim_queue_wait_idle(struct cgsim_queue *q, uint64_t timeout_ns)
{
    struct cgsim_deadline d = cgsim_deadline_after(timeout_ns);
    pthread_mutex_lock(&q->lock);
    uint64_t target = q->submitted;
    while (q->completed < target && !q->stop && cgsim_cond_wait_until(&q->cond, &q->lock, &d)) {}
    bool done = q->completed >= target;
    pthread_mutex_unlock(&q->lock);
    return done ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t check_queue_desc(const ze_command_queue_desc_t *desc)
{
    if (desc->flags & ~(ze_command_queue_flags_t)ZE_COMMAND_QUEUE_FLAG_EXPLICIT_ONLY)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if ((uint32_t)desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS ||
        (uint32_t)desc->priority > ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_HIGH)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->ordinal != 0 || desc->index >= CGSIM_QUEUES_PER_GROUP) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_queue_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                                 const ze_command_queue_desc_t *desc,
                                                 ze_command_queue_handle_t *phCommandQueue)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    CGSIM_CHECK_PTR(desc);
    CGSIM_CHECK_PTR(phCommandQueue);
    ze_result_t r = check_queue_desc(desc);
    if (r != ZE_RESULT_SUCCESS) return r;
    struct cgsim_queue *q = NULL;
    r = cgsim_queue_create_internal(ctx, dev, desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, &q);
    if (r != ZE_RESULT_SUCCESS) return r;
    if (!cgsim_handle_register(&q->hdr)) {
        cgsim_queue_destroy_internal(q);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *phCommandQueue = (ze_command_queue_handle_t)q;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_queue_destroy(ze_command_queue_handle_t hCommandQueue)
{
    CGSIM_CHECK_HANDLE(q, struct cgsim_queue, hCommandQueue, CGSIM_KIND_QUEUE);
    cgsim_handle_unregister(&q->hdr);
    cgsim_queue_destroy_internal(q);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_queue_execute(ze_command_queue_handle_t hCommandQueue, uint32_t numCommandLists,
                                                  ze_command_list_handle_t *phCommandLists, ze_fence_handle_t hFence)
{
    CGSIM_CHECK_HANDLE(q, struct cgsim_queue, hCommandQueue, CGSIM_KIND_QUEUE);
    CGSIM_CHECK_PTR(phCommandLists);
    if (numCommandLists == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    struct cgsim_fence *fence = NULL;
    if (hFence) {
        fence = cgsim_handle_lookup(hFence, CGSIM_KIND_FENCE);
        if (!fence || fence->queue != q) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    struct cgsim_cmd_vec batch = {0};
    for (uint32_t i = 0; i < numCommandLists; i++) {
        if (phCommandLists[i] == NULL) {
            cgsim_cmd_vec_free(&batch);
            return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        }
        struct cgsim_list *list = cgsim_handle_lookup(phCommandLists[i], CGSIM_KIND_LIST);
        /* Immediate lists cannot be submitted and a list must be closed before it is executed. */
        if (!list || list->immediate) {
            cgsim_cmd_vec_free(&batch);
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
        pthread_mutex_lock(&list->lock);
        ze_result_t copied = list->closed ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
        for (size_t c = 0; copied == ZE_RESULT_SUCCESS && c < list->cmds.count; c++)
            if (!cmd_vec_push(&batch, &list->cmds.items[c])) copied = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        pthread_mutex_unlock(&list->lock);
        if (copied != ZE_RESULT_SUCCESS) {
            cgsim_cmd_vec_free(&batch);
            return copied;
        }
    }
    ze_result_t r = cgsim_queue_submit(q, &batch, fence);
    cgsim_cmd_vec_free(&batch); /* empty unless the submit failed */
    return r;
}

static ze_result_t ZE_APICALL cgsim_queue_synchronize(ze_command_queue_handle_t hCommandQueue, uint64_t timeout)
{
    CGSIM_CHECK_HANDLE(q, struct cgsim_queue, hCommandQueue, CGSIM_KIND_QUEUE);
    return cgsim_queue_wait_idle(q, timeout);
}

void cgsim_fill_queue_table(ze_command_queue_dditable_t *t)
{
    t->pfnCreate = cgsim_queue_create;
    t->pfnDestroy = cgsim_queue_destroy;
    t->pfnExecuteCommandLists = cgsim_queue_execute;
    t->pfnSynchronize = cgsim_queue_synchronize;
}

/* At unload (process exit, given -z nodelete) no worker may still run simulator code. */
__attribute__((destructor)) static void stop_all_workers(void)
{
    pthread_mutex_lock(&queues_lock);
    size_t n = live_queue_count;
    struct cgsim_queue **copy = n ? malloc(n * sizeof *copy) : NULL;
    if (copy) memcpy(copy, live_queues, n * sizeof *copy);
    pthread_mutex_unlock(&queues_lock);
    for (size_t i = 0; copy && i < n; i++)
        stop_worker(copy[i]);
    free(copy);
}

/* ---- command lists ------------------------------------------------------------------------------------------ */

static ze_result_t new_list(struct cgsim_context *ctx, struct cgsim_device *dev, bool immediate, bool synchronous,
                            ze_command_list_handle_t *out)
{
    struct cgsim_list *list = calloc(1, sizeof *list);
    if (!list) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    cgsim_object_init(&list->hdr, CGSIM_KIND_LIST);
    pthread_mutex_init(&list->lock, NULL);
    list->context = ctx;
    list->device = dev;
    list->immediate = immediate;
    if (immediate) {
        ze_result_t r = cgsim_queue_create_internal(ctx, dev, synchronous, &list->queue);
        if (r != ZE_RESULT_SUCCESS) {
            free(list);
            return r;
        }
    }
    if (!cgsim_handle_register(&list->hdr)) {
        if (list->queue) cgsim_queue_destroy_internal(list->queue);
        free(list);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *out = (ze_command_list_handle_t)list;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_list_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                                const ze_command_list_desc_t *desc,
                                                ze_command_list_handle_t *phCommandList)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    CGSIM_CHECK_PTR(desc);
    CGSIM_CHECK_PTR(phCommandList);
    const ze_command_list_flags_t known = ZE_COMMAND_LIST_FLAG_RELAXED_ORDERING |
                                          ZE_COMMAND_LIST_FLAG_MAXIMIZE_THROUGHPUT | ZE_COMMAND_LIST_FLAG_EXPLICIT_ONLY;
    if (desc->flags & ~known) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->commandQueueGroupOrdinal != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return new_list(ctx, dev, false, false, phCommandList);
}

static ze_result_t ZE_APICALL cgsim_list_create_immediate(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                                          const ze_command_queue_desc_t *desc,
                                                          ze_command_list_handle_t *phCommandList)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    CGSIM_CHECK_PTR(desc);
    CGSIM_CHECK_PTR(phCommandList);
    ze_result_t r = check_queue_desc(desc);
    if (r != ZE_RESULT_SUCCESS) return r;
    return new_list(ctx, dev, true, desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, phCommandList);
}

static ze_result_t ZE_APICALL cgsim_list_destroy(ze_command_list_handle_t hCommandList)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    cgsim_handle_unregister(&list->hdr);
    if (list->queue) cgsim_queue_destroy_internal(list->queue);
    cgsim_cmd_vec_free(&list->cmds);
    pthread_mutex_destroy(&list->lock);
    free(list);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_list_close(ze_command_list_handle_t hCommandList)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    pthread_mutex_lock(&list->lock);
    list->closed = true; /* harmless for immediate lists, which have nothing to close */
    pthread_mutex_unlock(&list->lock);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_list_reset(ze_command_list_handle_t hCommandList)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    pthread_mutex_lock(&list->lock);
    cgsim_cmd_vec_free(&list->cmds);
    list->closed = false;
    pthread_mutex_unlock(&list->lock);
    return ZE_RESULT_SUCCESS;
}

/* Validates the event arguments every append takes and fills them into cmd (waits point at the caller's array,
 * which cmd_vec_push copies). */
static ze_result_t check_events(struct cgsim_cmd *cmd, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                ze_event_handle_t *phWaitEvents)
{
    if (numWaitEvents > 0 && phWaitEvents == NULL) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (hSignalEvent && !(cmd->signal = cgsim_handle_lookup(hSignalEvent, CGSIM_KIND_EVENT)))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < numWaitEvents; i++) {
        if (phWaitEvents[i] == NULL) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!cgsim_handle_lookup(phWaitEvents[i], CGSIM_KIND_EVENT)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    cmd->num_waits = numWaitEvents;
    cmd->waits = (struct cgsim_event **)phWaitEvents;
    return ZE_RESULT_SUCCESS;
}

/* Records cmd in a regular list, or runs it right away on an immediate list. */
static ze_result_t append(struct cgsim_list *list, const struct cgsim_cmd *cmd)
{
    if (list->immediate) {
        struct cgsim_cmd_vec one = {0};
        if (!cmd_vec_push(&one, cmd)) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        ze_result_t r = cgsim_queue_submit(list->queue, &one, NULL);
        cgsim_cmd_vec_free(&one);
        return r;
    }
    /* Appending to a closed list is an application error: it must be reset first. */
    pthread_mutex_lock(&list->lock);
    ze_result_t r = list->closed                     ? ZE_RESULT_ERROR_INVALID_ARGUMENT
                    : cmd_vec_push(&list->cmds, cmd) ? ZE_RESULT_SUCCESS
                                                     : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    pthread_mutex_unlock(&list->lock);
    return r;
}

static ze_result_t ZE_APICALL cgsim_list_append_barrier(ze_command_list_handle_t hCommandList,
                                                        ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                        ze_event_handle_t *phWaitEvents)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    struct cgsim_cmd cmd = {.kind = CGSIM_CMD_BARRIER};
    ze_result_t r = check_events(&cmd, hSignalEvent, numWaitEvents, phWaitEvents);
    return r != ZE_RESULT_SUCCESS ? r : append(list, &cmd);
}

static ze_result_t ZE_APICALL cgsim_list_append_memory_ranges_barrier(
    ze_command_list_handle_t hCommandList, uint32_t numRanges, const size_t *pRangeSizes, const void **pRanges,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents)
{
    CGSIM_CHECK_PTR(pRangeSizes);
    CGSIM_CHECK_PTR(pRanges);
    (void)numRanges;
    return cgsim_list_append_barrier(hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
}

static bool overlaps(const void *a, const void *b, size_t size)
{
    const char *x = a;
    const char *y = b;
    return size > 0 && x < y + size && y < x + size;
}

static ze_result_t ZE_APICALL cgsim_list_append_memory_copy(ze_command_list_handle_t hCommandList, void *dstptr,
                                                            const void *srcptr, size_t size,
                                                            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                            ze_event_handle_t *phWaitEvents)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    CGSIM_CHECK_PTR(dstptr);
    CGSIM_CHECK_PTR(srcptr);
    if (overlaps(dstptr, srcptr, size)) return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
    struct cgsim_cmd cmd = {.kind = CGSIM_CMD_COPY, .dst = dstptr, .src = srcptr, .size = size};
    ze_result_t r = check_events(&cmd, hSignalEvent, numWaitEvents, phWaitEvents);
    return r != ZE_RESULT_SUCCESS ? r : append(list, &cmd);
}

static ze_result_t ZE_APICALL cgsim_list_append_memory_fill(ze_command_list_handle_t hCommandList, void *ptr,
                                                            const void *pattern, size_t pattern_size, size_t size,
                                                            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                            ze_event_handle_t *phWaitEvents)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    CGSIM_CHECK_PTR(ptr);
    CGSIM_CHECK_PTR(pattern);
    /* maxMemoryFillPatternSize is 16; patterns are powers of two like on real hardware. */
    if (pattern_size == 0 || pattern_size > 16 || (pattern_size & (pattern_size - 1)) != 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    struct cgsim_cmd cmd = {.kind = CGSIM_CMD_FILL, .dst = ptr, .size = size, .size_pattern = pattern_size};
    memcpy(cmd.pattern, pattern, pattern_size);
    ze_result_t r = check_events(&cmd, hSignalEvent, numWaitEvents, phWaitEvents);
    return r != ZE_RESULT_SUCCESS ? r : append(list, &cmd);
}

static ze_result_t ZE_APICALL cgsim_list_append_signal_event(ze_command_list_handle_t hCommandList,
                                                             ze_event_handle_t hEvent)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    CGSIM_CHECK_HANDLE(ev, struct cgsim_event, hEvent, CGSIM_KIND_EVENT);
    struct cgsim_cmd cmd = {.kind = CGSIM_CMD_SIGNAL, .signal = ev};
    return append(list, &cmd);
}

static ze_result_t ZE_APICALL cgsim_list_append_wait_on_events(ze_command_list_handle_t hCommandList,
                                                               uint32_t numEvents, ze_event_handle_t *phEvents)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    CGSIM_CHECK_PTR(phEvents);
    struct cgsim_cmd cmd = {.kind = CGSIM_CMD_WAIT};
    ze_result_t r = check_events(&cmd, NULL, numEvents, phEvents);
    return r != ZE_RESULT_SUCCESS ? r : append(list, &cmd);
}

static ze_result_t ZE_APICALL cgsim_list_append_event_reset(ze_command_list_handle_t hCommandList,
                                                            ze_event_handle_t hEvent)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    CGSIM_CHECK_HANDLE(ev, struct cgsim_event, hEvent, CGSIM_KIND_EVENT);
    struct cgsim_cmd cmd = {.kind = CGSIM_CMD_RESET, .target = ev};
    return append(list, &cmd);
}

static ze_result_t ZE_APICALL cgsim_list_append_launch_kernel(ze_command_list_handle_t hCommandList,
                                                              ze_kernel_handle_t hKernel,
                                                              const ze_group_count_t *pLaunchFuncArgs,
                                                              ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                              ze_event_handle_t *phWaitEvents)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    CGSIM_CHECK_HANDLE(kernel, struct cgsim_kernel, hKernel, CGSIM_KIND_KERNEL);
    (void)kernel;
    CGSIM_CHECK_PTR(pLaunchFuncArgs);
    struct cgsim_cmd cmd = {.kind = CGSIM_CMD_LAUNCH, .duration_us = list->context->driver->config.kernel_us};
    ze_result_t r = check_events(&cmd, hSignalEvent, numWaitEvents, phWaitEvents);
    return r != ZE_RESULT_SUCCESS ? r : append(list, &cmd);
}

static ze_result_t ZE_APICALL cgsim_list_append_memory_prefetch(ze_command_list_handle_t hCommandList, const void *ptr,
                                                                size_t size)
{
    CGSIM_CHECK_HANDLE(list, struct cgsim_list, hCommandList, CGSIM_KIND_LIST);
    (void)list;
    (void)size;
    CGSIM_CHECK_PTR(ptr);
    return ZE_RESULT_SUCCESS; /* all memory is host memory: nothing to migrate */
}

void cgsim_fill_list_table(ze_command_list_dditable_t *t)
{
    t->pfnCreate = cgsim_list_create;
    t->pfnCreateImmediate = cgsim_list_create_immediate;
    t->pfnDestroy = cgsim_list_destroy;
    t->pfnClose = cgsim_list_close;
    t->pfnReset = cgsim_list_reset;
    t->pfnAppendBarrier = cgsim_list_append_barrier;
    t->pfnAppendMemoryRangesBarrier = cgsim_list_append_memory_ranges_barrier;
    t->pfnAppendMemoryCopy = cgsim_list_append_memory_copy;
    t->pfnAppendMemoryFill = cgsim_list_append_memory_fill;
    t->pfnAppendSignalEvent = cgsim_list_append_signal_event;
    t->pfnAppendWaitOnEvents = cgsim_list_append_wait_on_events;
    t->pfnAppendEventReset = cgsim_list_append_event_reset;
    t->pfnAppendLaunchKernel = cgsim_list_append_launch_kernel;
    t->pfnAppendLaunchCooperativeKernel = cgsim_list_append_launch_kernel;
    t->pfnAppendMemoryPrefetch = cgsim_list_append_memory_prefetch;
}
