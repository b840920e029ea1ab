/* Calls that wait behind another thread's call inside the driver
 * (src/common/behind.c): only where the process matched the quirk that
 * knows the lock, only a waiter behind an older holder on another thread
 * that is inside the driver, and never out of a page's fields. */
#include "cgtest.h"

#include "../src/common/behind.h"

static cgi_quirk_rec quirks[2];
static cgi_hang_call calls[4];

static void call(unsigned i, int tid, const char *name, uint64_t age_ms)
{
    memset(&calls[i], 0, sizeof calls[i]);
    calls[i].tid = tid;
    snprintf(calls[i].api, sizeof calls[i].api, "hip");
    snprintf(calls[i].name, sizeof calls[i].name, "%s", name);
    calls[i].age_ns = age_ms * 1000000u;
}

/* The record of a matched quirk as apis/quirks.ini gives it: #11678's with its waits_behind, another without. */
static void matched(const char *name)
{
    memset(quirks, 0, sizeof quirks);
    snprintf(quirks[1].name, sizeof quirks[1].name, "%s", name);
    if (strcmp(name, "rocm-11678-hipStreamSynchronize") == 0) {
        snprintf(quirks[1].sites, sizeof quirks[1].sites, "hipStreamSynchronize");
        snprintf(quirks[1].waiters, sizeof quirks[1].waiters,
                 "hipStreamWaitEvent, hipLaunchKernel, hipModuleLaunchKernel, hipExtModuleLaunchKernel, "
                 "hipMemcpyAsync, hipMemcpy, hipMemsetAsync, hipMemset, hipEventRecord, hipEventSynchronize, "
                 "hipStreamSynchronize, hipDeviceSynchronize");
    } else {
        snprintf(quirks[1].sites, sizeof quirks[1].sites, "hipMallocAsync, hipFreeAsync, hipEventSynchronize:shared");
    }
    atomic_store(&quirks[1].valid, 1);
}

static const char *behind(unsigned i, int *h) { return cgi_behind_quirk(quirks, 2, calls, 4, i, h); }

static int test_a_waiter_younger_than_a_sync_on_another_thread_waits_behind_it(int argc, char **argv)
{
    (void)argc, (void)argv;
    matched("rocm-11678-hipStreamSynchronize");
    call(0, 10, "hipStreamSynchronize", 900);
    call(1, 11, "hipStreamWaitEvent", 700);
    call(2, 12, "hipStreamSynchronize", 800); /* a later synchronize waits too, behind the oldest */
    call(3, 13, "hipGetDevice", 600);         /* takes no lock of the device */
    int h;
    const char *q = behind(1, &h);
    CHECK(q && strcmp(q, "rocm-11678-hipStreamSynchronize") == 0 && h == 0);
    CHECK(behind(2, &h) && h == 0);
    CHECK(!behind(0, &h) && h == -1); /* the oldest waits behind no one */
    CHECK(!behind(3, &h));
    return 0;
}

static int test_nothing_waits_behind_without_the_quirk_an_older_sync_or_another_thread(int argc, char **argv)
{
    (void)argc, (void)argv;
    int h;
    matched("rocm-10529-hipMallocAsync");
    call(0, 10, "hipStreamSynchronize", 900);
    call(1, 11, "hipMemcpy", 700);
    call(2, 12, "hipInit", 1);
    call(3, 13, "hipInit", 1);
    CHECK(!behind(1, &h)); /* the process did not match #11678 */
    matched("rocm-11678-hipStreamSynchronize");
    CHECK(behind(1, &h) && h == 0);
    call(1, 11, "hipMemcpy", 950); /* began before the synchronize */
    CHECK(!behind(1, &h));
    call(1, 10, "hipMemcpy", 700); /* the same thread: not a wait for another */
    CHECK(!behind(1, &h));
    call(1, 11, "hipMemcpy", 700);
    calls[0].waiting = 1; /* the synchronize waits for a lock of callguard's: inside no driver */
    CHECK(!behind(1, &h));
    calls[0].waiting = 0;
    memset(calls[0].name, 'x', sizeof calls[0].name); /* a page that holds anything */
    memset(calls[1].name, 'y', sizeof calls[1].name);
    CHECK(!behind(1, &h));
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"a_waiter_younger_than_a_sync_on_another_thread_waits_behind_it",
     test_a_waiter_younger_than_a_sync_on_another_thread_waits_behind_it},
    {"nothing_waits_behind_without_the_quirk_an_older_sync_or_another_thread",
     test_nothing_waits_behind_without_the_quirk_an_older_sync_or_another_thread},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
