/* zesim_launch_signals_event_and_fence: a kernel launched through a command list runs for CGSIM_KERNEL_US
 * (50000 in this test) on a host thread, then signals its event and the fence; waits, barriers, event resets and
 * immediate command lists behave in order. */
#include "zesim_test.h"

int main(void)
{
    struct sim s = sim_open();
    uint8_t buf[64];
    const char *specs[] = {"k:args=1"};
    size_t len = make_spirv(buf, sizeof buf, specs, 1);
    ze_module_handle_t mod;
    OK(create_module(&s, ZE_MODULE_FORMAT_IL_SPIRV, buf, len, &mod, NULL));
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "k"};
    ze_kernel_handle_t kernel;
    OK(zeKernelCreate(mod, &kd, &kernel));

    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                               .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,
                               .count = 4};
    ze_event_pool_handle_t pool;
    OK(zeEventPoolCreate(s.context, &pd, 1, &s.device, &pool));
    ze_event_handle_t ev[4];
    for (uint32_t i = 0; i < 4; i++) {
        ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                              .index = i,
                              .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                              .wait = ZE_EVENT_SCOPE_FLAG_HOST};
        OK(zeEventCreate(pool, &ed, &ev[i]));
    }

    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_queue_handle_t queue;
    OK(zeCommandQueueCreate(s.context, s.device, &qd, &queue));
    ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC};
    ze_command_list_handle_t list;
    OK(zeCommandListCreate(s.context, s.device, &ld, &list));
    ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence;
    OK(zeFenceCreate(queue, &fd, &fence));

    /* list: wait for ev[3] (host-signalled), launch -> ev[0], barrier -> ev[1], reset ev[2] */
    ze_group_count_t groups = {4, 1, 1};
    OK(zeCommandListAppendWaitOnEvents(list, 1, &ev[3]));
    OK(zeCommandListAppendLaunchKernel(list, kernel, &groups, ev[0], 0, NULL));
    OK(zeCommandListAppendBarrier(list, ev[1], 1, &ev[0]));
    OK(zeCommandListAppendEventReset(list, ev[2]));
    OK(zeCommandListClose(list));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandListAppendBarrier(list, NULL, 0, NULL));

    OK(zeEventHostSignal(ev[2]));
    OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    /* Nothing can run until ev[3] is signalled. */
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventHostSynchronize(ev[0], 30ull * 1000 * 1000));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeCommandQueueSynchronize(queue, 0));

    double t0 = now_ms();
    OK(zeEventHostSignal(ev[3]));
    OK(zeEventHostSynchronize(ev[0], UINT64_MAX));
    double took = now_ms() - t0;
    fprintf(stderr, "kernel took %.1f ms\n", took);
    CHECK(took >= 0.9 * 50 && took <= 5 * 50);
    OK(zeEventHostSynchronize(ev[1], UINT64_MAX));
    OK(zeFenceHostSynchronize(fence, UINT64_MAX));
    OK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    OK(zeEventQueryStatus(ev[0]));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev[2])); /* reset by the list */

    ze_kernel_timestamp_result_t ts;
    OK(zeEventQueryKernelTimestamp(ev[0], &ts));
    CHECK(ts.global.kernelEnd > ts.global.kernelStart);

    /* Re-run after resets: the list is reusable. */
    OK(zeFenceReset(fence));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceQueryStatus(fence));
    for (int i = 0; i < 4; i++)
        OK(zeEventHostReset(ev[i]));
    OK(zeEventHostSignal(ev[3]));
    OK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
    OK(zeFenceHostSynchronize(fence, UINT64_MAX));
    OK(zeEventQueryStatus(ev[1]));

    /* An open list cannot be executed. */
    OK(zeCommandListReset(list));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_ARGUMENT, zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL));

    /* Immediate command list: the append starts at once. */
    ze_command_list_handle_t imm;
    OK(zeCommandListCreateImmediate(s.context, s.device, &qd, &imm));
    OK(zeEventHostReset(ev[0]));
    OK(zeCommandListAppendLaunchKernel(imm, kernel, &groups, ev[0], 0, NULL));
    OK(zeEventHostSynchronize(ev[0], UINT64_MAX));
    OK(zeCommandListAppendSignalEvent(imm, ev[2]));
    OK(zeEventHostSynchronize(ev[2], UINT64_MAX));
    OK(zeCommandListDestroy(imm));

    /* The pool refuses to go while events live. */
    CHECK_ZE(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zeEventPoolDestroy(pool));
    OK(zeFenceDestroy(fence));
    OK(zeCommandListDestroy(list));
    OK(zeCommandQueueDestroy(queue));
    for (int i = 0; i < 4; i++)
        OK(zeEventDestroy(ev[i]));
    OK(zeEventPoolDestroy(pool));
    OK(zeKernelDestroy(kernel));
    OK(zeModuleDestroy(mod));
    sim_close(&s);
    puts("ok");
    return 0;
}
