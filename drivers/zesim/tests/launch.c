/* zesim_launch_signals_event_and_fence: a kernel launched through a command list runs for CGSIM_KERNEL_US
 * (50000 in this test) on a host thread, then signals its event and the fence; waits, barriers, event resets and
 * immediate command lists behave in order. */
#include "zesim_test.h"

/* What the test makes, and destroys at its end. */
struct launch {
    ze_module_handle_t mod;
    ze_kernel_handle_t kernel;
    ze_event_pool_handle_t pool;
    ze_event_handle_t ev[4];
    ze_command_queue_desc_t qd;
    ze_command_queue_handle_t queue;
    ze_command_list_handle_t list;
    ze_fence_handle_t fence;
};

static const ze_group_count_t groups = {4, 1, 1};

/* The kernel, four host-visible events with timestamps, a queue, a list and a fence. */
static void make_objects(struct sim *s, struct launch *l)
{
    uint8_t buf[64];
    const char *specs[] = {"k:args=1"};
    size_t len = make_spirv(buf, sizeof buf, specs, 1);
    OK(create_module(s, ZE_MODULE_FORMAT_IL_SPIRV, buf, len, &l->mod, NULL));
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "k"};
    OK(zeKernelCreate(l->mod, &kd, &l->kernel));

    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                               .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                               .count = 4};
    OK(zeEventPoolCreate(s->context, &pd, 1, &s->device, &l->pool));
    for (uint32_t i = 0; i < 4; i++) {
        ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                              .index = i,
                              .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                              .wait = ZE_EVENT_SCOPE_FLAG_HOST};
        OK(zeEventCreate(l->pool, &ed, &l->ev[i]));
    }

    l->qd = (ze_command_queue_desc_t){.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                      .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    OK(zeCommandQueueCreate(s->context, s->device, &l->qd, &l->queue));
    ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    OK(zeCommandListCreate(s->context, s->device, &ld, &l->list));
    ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    OK(zeFenceCreate(l->queue, &fd, &l->fence));
}

/* The list: wait for ev[3] (host-signalled), launch -> ev[0], barrier -> ev[1], reset ev[2].
 * Nothing runs until ev[3] is signalled; then the kernel takes its time and the rest follows in order. */
static void run_list_in_order(struct launch *l)
{
    ze_event_handle_t *ev = l->ev;
    OK(zeCommandListAppendWaitOnEvents(l->list, 1, &ev[3]));
    OK(zeCommandListAppendLaunchKernel(l->list, l->kernel, &groups, ev[0], 0, NULL));
    OK(zeCommandListAppendBarrier(l->list, ev[1], 1, &ev[0]));
    OK(zeCommandListAppendEventReset(l->list, ev[2]));
    OK(zeCommandListClose(l->list));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendBarrier(l->list, NULL, 0, NULL));

    OK(zeEventHostSignal(ev[2]));
    OK(zeCommandQueueExecuteCommandLists(l->queue, 1, &l->list, l->fence));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventHostSynchronize(ev[0], 30ull * 1000 * 1000));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceQueryStatus(l->fence));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeCommandQueueSynchronize(l->queue, 0));

    double t0 = now_ms();
    OK(zeEventHostSignal(ev[3]));
    OK(zeEventHostSynchronize(ev[0], UINT64_MAX));
    double took = now_ms() - t0;
    fprintf(stderr, "kernel took %.1f ms\n", took);
    CHECK(took >= 0.9 * 50 && took <= 5 * 50);
    OK(zeEventHostSynchronize(ev[1], UINT64_MAX));
    OK(zeFenceHostSynchronize(l->fence, UINT64_MAX));
    OK(zeCommandQueueSynchronize(l->queue, UINT64_MAX));
    OK(zeEventQueryStatus(ev[0]));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev[2])); /* reset by the list */

    ze_kernel_timestamp_result_t ts;
    OK(zeEventQueryKernelTimestamp(ev[0], &ts));
    CHECK(ts.global.kernelEnd > ts.global.kernelStart);
}

/* Re-run after resets: the list is reusable. Then, reset, it is open and cannot be executed. */
static void rerun_list(struct launch *l)
{
    OK(zeFenceReset(l->fence));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceQueryStatus(l->fence));
    for (int i = 0; i < 4; i++)
        OK(zeEventHostReset(l->ev[i]));
    OK(zeEventHostSignal(l->ev[3]));
    OK(zeCommandQueueExecuteCommandLists(l->queue, 1, &l->list, l->fence));
    OK(zeFenceHostSynchronize(l->fence, UINT64_MAX));
    OK(zeEventQueryStatus(l->ev[1]));

    OK(zeCommandListReset(l->list));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandQueueExecuteCommandLists(l->queue, 1, &l->list, NULL));
}

/* Immediate command list: the append starts at once. */
static void run_immediate(struct sim *s, struct launch *l)
{
    ze_command_list_handle_t imm;
    OK(zeCommandListCreateImmediate(s->context, s->device, &l->qd, &imm));
    OK(zeEventHostReset(l->ev[0]));
    OK(zeCommandListAppendLaunchKernel(imm, l->kernel, &groups, l->ev[0], 0, NULL));
    OK(zeEventHostSynchronize(l->ev[0], UINT64_MAX));
    OK(zeCommandListAppendSignalEvent(imm, l->ev[2]));
    OK(zeEventHostSynchronize(l->ev[2], UINT64_MAX));
    OK(zeCommandListDestroy(imm));
}

/* The pool refuses to go while events live. */
static void destroy_objects(struct launch *l)
{
    CHECK_ZE(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zeEventPoolDestroy(l->pool));
    OK(zeFenceDestroy(l->fence));
    OK(zeCommandListDestroy(l->list));
    OK(zeCommandQueueDestroy(l->queue));
    for (int i = 0; i < 4; i++)
        OK(zeEventDestroy(l->ev[i]));
    OK(zeEventPoolDestroy(l->pool));
    OK(zeKernelDestroy(l->kernel));
    OK(zeModuleDestroy(l->mod));
}

int main(void)
{
    struct sim s = sim_open();
    struct launch l;
    make_objects(&s, &l);
    run_list_in_order(&l);
    rerun_list(&l);
    run_immediate(&s, &l);
    destroy_objects(&l);
    sim_close(&s);
    puts("ok");
    return 0;
}
