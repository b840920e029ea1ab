/* zesim_event_wait_times_out_or_wakes: zeEventHostSynchronize blocks for real: NOT_READY after about the timeout,
 * SUCCESS as soon as another thread signals; timeout 0 is a query. Same for fences. */
#include "zesim_test.h"

#include <pthread.h>
#include <unistd.h>

static void *signal_later(void *arg)
{
    usleep(100 * 1000);
    OK(zeEventHostSignal((ze_event_handle_t)arg));
    return NULL;
}

int main(void)
{
    struct sim s = sim_open();
    ze_event_pool_desc_t pd = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1};
    ze_event_pool_handle_t pool;
    OK(zeEventPoolCreate(s.context, &pd, 0, NULL, &pool));
    ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC};
    ze_event_handle_t ev;
    OK(zeEventCreate(pool, &ed, &ev));

    const uint64_t timeout_ns = 200ull * 1000 * 1000;
    double t0 = now_ms();
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventHostSynchronize(ev, timeout_ns));
    double took = now_ms() - t0;
    fprintf(stderr, "timed out after %.1f ms\n", took);
    CHECK(took >= 0.9 * 200 && took <= 5 * 200);

    t0 = now_ms();
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventHostSynchronize(ev, 0));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev));
    CHECK(now_ms() - t0 < 50);

    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, signal_later, ev) == 0);
    t0 = now_ms();
    OK(zeEventHostSynchronize(ev, UINT64_MAX));
    took = now_ms() - t0;
    fprintf(stderr, "woken after %.1f ms\n", took);
    CHECK(took >= 0.9 * 100 && took <= 5 * 100);
    pthread_join(thread, NULL);
    OK(zeEventHostSynchronize(ev, 0));
    OK(zeEventHostReset(ev));
    CHECK_ZE(ZE_RESULT_NOT_READY, zeEventQueryStatus(ev));

    /* Fences: created signalled, reset, then a timed wait on an idle queue times out. */
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC};
    ze_command_queue_handle_t queue;
    OK(zeCommandQueueCreate(s.context, s.device, &qd, &queue));
    ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC, .flags = ZE_FENCE_FLAG_SIGNALED};
    ze_fence_handle_t fence;
    OK(zeFenceCreate(queue, &fd, &fence));
    OK(zeFenceQueryStatus(fence));
    OK(zeFenceReset(fence));
    t0 = now_ms();
    CHECK_ZE(ZE_RESULT_NOT_READY, zeFenceHostSynchronize(fence, 50ull * 1000 * 1000));
    took = now_ms() - t0;
    CHECK(took >= 0.9 * 50 && took <= 5 * 50);
    OK(zeFenceDestroy(fence));
    OK(zeCommandQueueDestroy(queue));

    OK(zeEventDestroy(ev));
    OK(zeEventPoolDestroy(pool));
    sim_close(&s);
    puts("ok");
    return 0;
}
