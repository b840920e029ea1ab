/* A polling loop of zeEventQueryStatus on an event nobody signals (each
 * call returns ZE_RESULT_NOT_READY: a state, not a failure), a wait with no
 * time left (ZE_RESULT_NOT_READY again), the event signalled (SUCCESS), and
 * one real failure: an event index beyond its pool
 * (ZE_RESULT_ERROR_INVALID_ARGUMENT). Prints what the driver returned.
 * usage: ze_event_poll [POLLS] */
#include "ze_util.h"

int main(int argc, char **argv)
{
    long polls = argc > 1 ? atol(argv[1]) : 1000;
    ze_sim s = ze_sim_open();
    ze_event_pool_desc_t pd = {
        .stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE, .count = 1};
    ze_event_pool_handle_t pool;
    ZE_OK(zeEventPoolCreate(s.context, &pd, 1, &s.device, &pool));
    ze_event_desc_t ed = {.stype = ZE_STRUCTURE_TYPE_EVENT_DESC,
                          .index = 0,
                          .signal = ZE_EVENT_SCOPE_FLAG_HOST,
                          .wait = ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t ev;
    ZE_OK(zeEventCreate(pool, &ed, &ev));
    long not_ready = 0;
    for (long i = 0; i < polls; i++) {
        ze_result_t r = zeEventQueryStatus(ev);
        if (r != ZE_RESULT_NOT_READY) {
            fprintf(stderr, "poll %ld: zeEventQueryStatus returned 0x%x\n", i, (unsigned)r);
            return 4;
        }
        not_ready++;
    }
    ze_result_t wait = zeEventHostSynchronize(ev, 0);
    ZE_OK(zeEventHostSignal(ev));
    ZE_OK(zeEventQueryStatus(ev));
    ze_event_desc_t beyond = ed;
    beyond.index = 5;
    ze_event_handle_t none = NULL;
    ze_result_t bad = zeEventCreate(pool, &beyond, &none);
    printf("not_ready=%ld wait=0x%x beyond=0x%x\n", not_ready, (unsigned)wait, (unsigned)bad);
    ZE_OK(zeEventDestroy(ev));
    ZE_OK(zeEventPoolDestroy(pool));
    ZE_OK(zeContextDestroy(s.context));
    return 0;
}
