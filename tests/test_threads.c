/* Thread rules through the toy layer (toySetDims: writes = device, sets =
 * device in apis/toy.ini), in callguard's own code only, so that
 * ThreadSanitizer sees every synchronization (docs/development.md, "Sanitizers"): the checker, the
 * per-handle locks and cg_handle_hold. The real stacks are tests/threads/. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <pthread.h>
#include <sched.h>
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
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, set_dims_worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
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
    CHECKF(strstr(json, "\"rule\": \"overlap\"") &&
               strstr(json, "\"entry_point\": \"toySetDims\", \"access\": \"writes\", \"param\": \"device\""),
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
    while (!atomic_load(&held))
        cgtest_sleep_ms(1);
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

/* ---- no lock shared by two handles ---------------------------------------------
 * Thread A holds the lock of one handle and waits for thread B's work, as a
 * call that waits in the driver for an event does; B's work needs the lock
 * of another handle. Before per-handle locks, handles shared 256 stripes
 * (64 per handle-scoped domain) by a hash of their value: the two handles
 * below shared one, so B waited for A, A for B. A waits at most 5 s, so a
 * regression fails instead of hanging. */

/* The stripe the old code gave a handle: the hash both used, then the stripe count. */
static unsigned old_stripe(uintptr_t h, unsigned stripes)
{
    uint64_t x = (uint64_t)h;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (unsigned)(x & (stripes - 1));
}

/* A value other than `h` that the old code put in h's stripe, of 256 and so of 64 too. */
static uintptr_t collides_with(uintptr_t h)
{
    uintptr_t o = h + 64;
    while (old_stripe(o, 256) != old_stripe(h, 256))
        o += 64;
    return o;
}

static atomic_int a_ready, b_did;
static uintptr_t b_handle;
static int (*b_work)(uintptr_t);

/* A's side: waits up to 5 s for B's work; 1 when it came. */
static int wait_for_b(void)
{
    atomic_store(&a_ready, 1);
    for (int ms = 0; ms < 5000 && !atomic_load(&b_did); ms++)
        cgtest_sleep_ms(1);
    return atomic_load(&b_did);
}

static void *b_thread(void *arg)
{
    (void)arg;
    while (!atomic_load(&a_ready))
        cgtest_sleep_ms(1);
    int ok = b_work(b_handle);
    atomic_store(&b_did, 1);
    return (void *)(long)!ok;
}

/* Runs B (b_work on handle `other`) while `a` runs on this thread; a's result, and B's. */
static int with_b(int (*a)(void), uintptr_t other, int (*work)(uintptr_t), int *b_ok)
{
    atomic_store(&a_ready, 0), atomic_store(&b_did, 0);
    b_handle = other, b_work = work;
    pthread_t t;
    pthread_create(&t, NULL, b_thread, NULL);
    int got = a();
    void *r;
    pthread_join(t, &r);
    *b_ok = r == NULL;
    return got;
}

static uintptr_t a_handle;

static int a_holds(void)
{
    if (cg_handle_hold((void *)a_handle) != CG_OK) return 0;
    int got = wait_for_b();
    return cg_handle_release((void *)a_handle) == CG_OK && got;
}

static int b_holds(uintptr_t h) { return cg_handle_hold((void *)h) == CG_OK && cg_handle_release((void *)h) == CG_OK; }

static int b_sets_dims(uintptr_t h)
{
    static const uint32_t dims[3] = {1, 1, 1};
    /* Not a toy device: the driver refuses it, after the layer took its lock. */
    return toySetDims((toy_device_t)h, dims) == TOY_ERROR_INVALID_VALUE;
}

static int toy_handle_hold_never_waits_for_another_handle(int argc, char **argv)
{
    (void)argc, (void)argv;
    a_handle = 0x7f0000001000;
    uintptr_t other = collides_with(a_handle);
    int b_ok;
    CHECKF(with_b(a_holds, other, b_holds, &b_ok), "a hold of %#lx waited for a hold of %#lx", (unsigned long)other,
           (unsigned long)a_handle);
    CHECK(b_ok);
    return 0;
}

static int toy_serialized_call_never_waits_for_another_handle(int argc, char **argv)
{
    (void)argc, (void)argv;
    if (setup(1)) return 1;
    CHECK(cg_configure("CALLGUARD_CHECK_HOLD_US", "0") == CG_OK);
    a_handle = (uintptr_t)dev;
    uintptr_t other = collides_with(a_handle);
    int b_ok;
    CHECKF(with_b(a_holds, other, b_sets_dims, &b_ok), "toySetDims on %#lx waited for a hold of %#lx",
           (unsigned long)other, (unsigned long)a_handle);
    CHECK(b_ok);
    /* The same handle is still excluded: the hold keeps a call on it out. */
    return hold_case(1);
}

static atomic_int a_in_callback;

static void TOY_APICALL a_waits_inside(toy_device_t d, void *user)
{
    (void)d;
    atomic_store(&a_in_callback, 1);
    *(int *)user = wait_for_b();
}

static int a_calls_and_waits(void)
{
    int got = 0;
    return toyRunCallback((toy_device_t)a_handle, a_waits_inside, &got) == TOY_SUCCESS && got;
}

static void TOY_APICALL nothing(toy_device_t d, void *user) { (void)d, (void)user; }

static int b_calls(uintptr_t h) { return toyRunCallback((toy_device_t)h, nothing, NULL) == TOY_ERROR_INVALID_VALUE; }

static int toy_handle_scope_call_waiting_in_driver_never_holds_up_another_handle(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(toyGetDevice(1, &dev) == TOY_SUCCESS);
    CHECK(cg_serialize("toyRunCallback", "per-device", CG_SCOPE_HANDLE) == CG_OK);
    a_handle = (uintptr_t)dev;
    uintptr_t other = collides_with(a_handle);
    int b_ok;
    CHECKF(with_b(a_calls_and_waits, other, b_calls, &b_ok),
           "toyRunCallback on %#lx waited for the one on %#lx, which waited in the driver for it", (unsigned long)other,
           (unsigned long)a_handle);
    CHECK(b_ok && atomic_load(&a_in_callback));
    return 0;
}

/* ---- many threads on handles that share a bucket of the lock table -------------
 * Four threads hold, and call toySetDims on, six handles that hlock.c puts in
 * one bucket (its hash below): more locks in use at once than a bucket has
 * entries, so more are added. A plain counter per handle, changed only
 * under its lock, must come out exact (ThreadSanitizer sees a lock that
 * does not order it), and the checker sees no overlap. */

#define SHARED_N 6
#define SHARED_ROUNDS 400
static uintptr_t shared_h[SHARED_N];
static long shared_count[SHARED_N];
static atomic_int shared_inside[SHARED_N], shared_bad;

static unsigned new_bucket(uintptr_t h)
{
    uint64_t x = (uint64_t)h;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (unsigned)(x & 511);
}

static void *shared_worker(void *arg)
{
    static const uint32_t dims[3] = {1, 1, 1};
    int t = (int)(long)arg;
    pthread_barrier_wait(&start);
    for (int i = 0; i < SHARED_ROUNDS; i++) {
        int k = (t + i) % SHARED_N;
        if (i % 2) {
            (void)toySetDims((toy_device_t)shared_h[k], dims);
            continue;
        }
        if (cg_handle_hold((void *)shared_h[k]) != CG_OK) atomic_store(&shared_bad, 1);
        if (atomic_fetch_add(&shared_inside[k], 1) != 0) atomic_store(&shared_bad, 1);
        shared_count[k]++;
        sched_yield();
        atomic_fetch_sub(&shared_inside[k], 1);
        if (cg_handle_release((void *)shared_h[k]) != CG_OK) atomic_store(&shared_bad, 1);
    }
    return NULL;
}

static int toy_handle_locks_exclude_on_handles_sharing_a_bucket(int argc, char **argv)
{
    (void)argc, (void)argv;
    if (setup(1)) return 1;
    CHECK(cg_configure("CALLGUARD_CHECK_HOLD_US", "0") == CG_OK);
    uintptr_t h = 0x7f0000100000;
    for (int n = 0; n < SHARED_N; h += 64)
        if (n == 0 || new_bucket(h) == new_bucket(shared_h[0])) shared_h[n++] = h;
    pthread_barrier_init(&start, NULL, 4);
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, shared_worker, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&start);
    long total = 0;
    for (int k = 0; k < SHARED_N; k++)
        total += shared_count[k];
    CHECKF(!atomic_load(&shared_bad) && total == 4 * SHARED_ROUNDS / 2, "two holders at once (%d), or %ld holds of %d",
           atomic_load(&shared_bad), total, 4 * SHARED_ROUNDS / 2);
    char *json = report();
    CHECK(json);
    CHECKF(strstr(json, "\"thread_violations\": []"), "%s", json);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"toy_thread_check_reports_overlap_with_both_threads", toy_thread_check_reports_overlap_with_both_threads},
    {"toy_serialize_handles_leaves_no_overlap", toy_serialize_handles_leaves_no_overlap},
    {"toy_thread_check_ignores_null_handles", toy_thread_check_ignores_null_handles},
    {"toy_handle_hold_excludes_calls_and_is_checked", toy_handle_hold_excludes_calls_and_is_checked},
    {"toy_handle_hold_serialized_waits_for_the_release", toy_handle_hold_serialized},
    {"toy_handle_hold_never_waits_for_another_handle", toy_handle_hold_never_waits_for_another_handle},
    {"toy_serialized_call_never_waits_for_another_handle", toy_serialized_call_never_waits_for_another_handle},
    {"toy_handle_scope_call_waiting_in_driver_never_holds_up_another_handle",
     toy_handle_scope_call_waiting_in_driver_never_holds_up_another_handle},
    {"toy_handle_locks_exclude_on_handles_sharing_a_bucket", toy_handle_locks_exclude_on_handles_sharing_a_bucket},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
