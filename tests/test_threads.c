/* Thread rules through the toy layer (toySetDims: writes = device, sets =
 * device in apis/toy.ini), in callguard's own code only, so that
 * ThreadSanitizer sees every synchronization (docs/development.md, "Sanitizers"): the checker, the
 * per-handle locks and cg_handle_hold. The real stacks are tests/threads/. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <pthread.h>
#include <stdatomic.h>
#include <toy.h>
#include <unistd.h>

static toy_device_t dev;
static pthread_barrier_t start;
static toy_device_t call_with; /* the handle both threads pass */
static pid_t tids[2];
/* Each thread goes on until the other has done its calls too, so they overlap on a busy machine. */
static atomic_int done[2];

static void *set_dims_worker(void *arg)
{
    static const uint32_t dims[3] = {1, 1, 1};
    int me = (int)(long)arg;
    tids[me] = gettid();
    pthread_barrier_wait(&start);
    for (int i = 0; i < 5 || atomic_load(&done[1 - me]) < 5; i++, atomic_fetch_add(&done[me], 1))
        (void)toySetDims(call_with, dims);
    return NULL;
}

static void two_threads(toy_device_t d)
{
    call_with = d;
    atomic_store(&done[0], 0), atomic_store(&done[1], 0);
    pthread_barrier_init(&start, NULL, 2);
    pthread_t t[2];
    for (long i = 0; i < 2; i++) pthread_create(&t[i], NULL, set_dims_worker, (void *)i);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
}

/* This process's report, as JSON text. */
static char *report(void)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/report.json", cgtest_tmpdir());
    static char *buf; /* valid until the next call */
    free(buf);
    buf = NULL;
    if (cg_report_write(path, CG_REPORT_JSON) != CG_OK) return NULL;
    return buf = cgtest_read_file(path, NULL);
}

static int setup(int serialize)
{
    CHECK(toyGetDevice(0, &dev) == TOY_SUCCESS);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_configure("CALLGUARD_CHECK_HOLD_US", "2000") == CG_OK);
    CHECK(cg_check_threads(1) == CG_OK);
    CHECK(cg_serialize_handles(serialize) == CG_OK);
    return 0;
}

static int toy_thread_check_reports_overlap_with_both_threads(int argc, char **argv)
{
    (void)argc, (void)argv;
    if (setup(0)) return 1;
    two_threads(dev);
    char *json = report();
    CHECK(json);
    CHECKF(strstr(json, "\"rule\": \"overlap\"") && strstr(json, "\"entry_point\": \"toySetDims\", \"access\": \"writes\", \"param\": \"device\""),
           "%s", json);
    char a[64], b[64];
    snprintf(a, sizeof a, "\"tid\": %d", (int)tids[0]);
    snprintf(b, sizeof b, "\"other_tid\": %d", (int)tids[1]);
    int ab = strstr(json, a) && strstr(json, b);
    snprintf(a, sizeof a, "\"tid\": %d", (int)tids[1]);
    snprintf(b, sizeof b, "\"other_tid\": %d", (int)tids[0]);
    CHECKF(ab || (strstr(json, a) && strstr(json, b)), "both threads %d %d: %s", (int)tids[0], (int)tids[1], json);
    return 0;
}

static int toy_serialize_handles_leaves_no_overlap(int argc, char **argv)
{
    (void)argc, (void)argv;
    if (setup(1)) return 1;
    two_threads(dev);
    char *json = report();
    CHECK(json);
    CHECKF(strstr(json, "\"thread_violations\": []"), "%s", json);
    cg_site_stats st;
    CHECK(cg_get_stats("toySetDims", &st) == CG_OK);
    CHECKF(st.calls >= 10 && st.lock_wait_ns > 0, "calls %lu, lock wait %lu ns", (unsigned long)st.calls,
           (unsigned long)st.lock_wait_ns);
    return 0;
}

static int toy_thread_check_ignores_null_handles(int argc, char **argv)
{
    (void)argc, (void)argv;
    if (setup(0)) return 1;
    two_threads(NULL);
    char *json = report();
    CHECK(json);
    CHECKF(strstr(json, "\"thread_violations\": []"), "%s", json);
    return 0;
}

static atomic_int held, b_done;

static void *hold_then_release(void *arg)
{
    (void)arg;
    if (cg_handle_hold(dev) != CG_OK) return (void *)1;
    atomic_store(&held, 1);
    cgtest_sleep_ms(50);
    /* With per-handle locks the other thread's call waits for this release. */
    int early = atomic_load(&b_done);
    if (cg_handle_release(dev) != CG_OK) return (void *)1;
    return (void *)(long)(early ? 2 : 0);
}

static int hold_case(int serialized)
{
    static const uint32_t dims[3] = {1, 1, 1};
    if (setup(serialized)) return 1;
    CHECK(cg_handle_release(dev) == CG_EINVAL); /* not held */
    CHECK(cg_handle_hold(NULL) == CG_EINVAL);
    pthread_t t;
    pthread_create(&t, NULL, hold_then_release, NULL);
    while (!atomic_load(&held)) cgtest_sleep_ms(1);
    (void)toySetDims(dev, dims);
    atomic_store(&b_done, 1);
    void *r;
    pthread_join(t, &r);
    char *json = report();
    CHECK(json);
    if (serialized) {
        /* Serialized: the call waited for the release, so no overlap. */
        CHECKF(r == NULL, "the call returned while the handle was held (%ld)", (long)r);
        CHECKF(strstr(json, "\"thread_violations\": []"), "%s", json);
    } else {
        /* Checked only: the call went in during the hold, named as an overlap with it. */
        CHECKF(r == (void *)2, "the call did not go in during the hold (%ld)", (long)r);
        CHECKF(strstr(json, "\"other_entry_point\": \"cg_handle_hold\""), "%s", json);
    }
    /* The holder's own calls go through while it holds (no self-deadlock), and holds nest. */
    CHECK(cg_handle_hold(dev) == CG_OK && cg_handle_hold(dev) == CG_OK);
    CHECK(toySetDims(dev, dims) == TOY_SUCCESS);
    CHECK(cg_handle_release(dev) == CG_OK && cg_handle_release(dev) == CG_OK);
    CHECK(cg_handle_release(dev) == CG_EINVAL);
    return 0;
}

static int toy_handle_hold_excludes_calls_and_is_checked(int argc, char **argv)
{
    (void)argc, (void)argv;
    return hold_case(0);
}

static int toy_handle_hold_serialized(int argc, char **argv)
{
    (void)argc, (void)argv;
    return hold_case(1);
}

const cgtest_case cgtest_cases[] = {
    {"toy_thread_check_reports_overlap_with_both_threads", toy_thread_check_reports_overlap_with_both_threads},
    {"toy_serialize_handles_leaves_no_overlap", toy_serialize_handles_leaves_no_overlap},
    {"toy_thread_check_ignores_null_handles", toy_thread_check_ignores_null_handles},
    {"toy_handle_hold_excludes_calls_and_is_checked", toy_handle_hold_excludes_calls_and_is_checked},
    {"toy_handle_hold_serialized_waits_for_the_release", toy_handle_hold_serialized},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
