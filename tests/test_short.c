/* The short paths of a guarded call (layer ABI 6: the wrapper calls the real
 * function itself between cg_enter and cg_leave; ABI 8: it makes a plain
 * counted call itself, cg_site_counted) against the general path
 * (the frame and cg_call), through the toy layer: each configuration counts
 * the same calls, failures and states, returns the real function's result
 * and leaves its errno for the caller; a call a driver callback makes
 * inside a counted call is counted as nested; and counts stay exact while
 * another thread changes the policy under calls in flight. */
#include "cgtest.h"

#include <callguard/callguard.h>
#include <callguard/layer.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <toy.h>

static toy_device_t dev(uint32_t i)
{
    toy_device_t d = NULL;
    toyGetDevice(i, &d);
    return d;
}

static int always_holds(void) { return 1; }
static void run_inside(void (*fn)(void *), void *arg) { fn(arg); }
static const cg_adapter holding_adapter = {"holding", always_holds, run_inside};

/* The process's JSON report, written to NAME in the test's folder and read
 * back (valid until the next call); NULL when either fails. */
static char *report_json(const char *name, char *path, size_t size)
{
    static char *json;
    free(json);
    json = NULL;
    snprintf(path, size, "%s/%s", cgtest_tmpdir(), name);
    if (cg_report_write(path, CG_REPORT_JSON) != CG_OK) return NULL;
    return json = cgtest_read_file(path, NULL);
}

/* Each configuration a counted call can meet, from the shortest path to the
 * general one. */
enum { CFG_COUNTED, CFG_DETECT, CFG_GENERAL_ACTIVE, CFG_GENERAL_SERIALIZED, CFG_N };
static const char *const cfg_name[CFG_N] = {"counted", "detect", "adapter active (general path)",
                                            "serialized (general path)"};

static int set_config(int cfg)
{
    CHECK(cg_serialize("toySetErrno", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_set_adapter(NULL, CG_ADAPTER_DETECT) == CG_OK);
    if (cfg == CFG_DETECT) CHECK(cg_set_adapter(&holding_adapter, CG_ADAPTER_DETECT) == CG_OK);
    if (cfg == CFG_GENERAL_ACTIVE) CHECK(cg_set_adapter(&holding_adapter, CG_ADAPTER_ACTIVE) == CG_OK);
    if (cfg == CFG_GENERAL_SERIALIZED) CHECK(cg_serialize("toySetErrno", "e", CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

static int test_every_path_counts_results_and_keeps_errno(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_configure("CALLGUARD_TIMING", "exact") == CG_OK);
    CHECK(cg_stats_enable(1) == CG_OK);
    static const toy_result_t results[] = {TOY_SUCCESS, TOY_ERROR_INVALID_VALUE, TOY_ERROR_TIMEOUT};
    enum { N = 3000 };
    for (int cfg = 0; cfg < CFG_N; cfg++) {
        CHECK(set_config(cfg) == 0);
        CHECK(cg_reset_stats() == CG_OK);
        for (int i = 0; i < N; i++) {
            toy_result_t want = results[i % 3];
            errno = 0;
            toy_result_t got = toySetErrno(1000 + i, want);
            int e = errno;
            CHECKF(got == want, "%s: result %d, want %d", cfg_name[cfg], got, want);
            CHECKF(e == 1000 + i, "%s: errno %d after the call, the driver set %d", cfg_name[cfg], e, 1000 + i);
            CHECKF(toyNop(i) == i, "%s: toyNop's result", cfg_name[cfg]);
            errno = 77;
            toyTouch(&e);
            CHECKF(errno == 77, "%s: errno changed by a call that sets none", cfg_name[cfg]);
        }
        cg_site_stats s;
        CHECK(cg_get_stats("toySetErrno", &s) == CG_OK);
        CHECKF(s.calls == N && s.errors == N / 3 && s.states == N / 3 && s.nested == 0,
               "%s: calls %lu errors %lu states %lu nested %lu", cfg_name[cfg], (unsigned long)s.calls,
               (unsigned long)s.errors, (unsigned long)s.states, (unsigned long)s.nested);
        /* Timed exactly (CALLGUARD_TIMING=exact, set above): sampled times
         * of short calls are 0 (tests/watchdog covers those). */
        CHECKF(s.max_ns > 0 && s.total_ns >= s.max_ns, "%s: no time counted", cfg_name[cfg]);
        CHECK(cg_get_stats("toyNop", &s) == CG_OK);
        CHECKF(s.calls == N && s.errors == 0 && s.states == 0, "%s: toyNop calls %lu", cfg_name[cfg],
               (unsigned long)s.calls);
        CHECK(cg_get_stats("toyTouch", &s) == CG_OK);
        CHECKF(s.calls == N, "%s: toyTouch calls %lu", cfg_name[cfg], (unsigned long)s.calls);
    }
    /* The result codes by name: the report lists them. */
    CHECK(set_config(CFG_COUNTED) == 0);
    CHECK(cg_reset_stats() == CG_OK);
    for (int i = 0; i < 7; i++)
        toySetErrno(0, TOY_ERROR_TIMEOUT);
    for (int i = 0; i < 5; i++)
        toySetErrno(0, TOY_ERROR_INVALID_VALUE);
    char path[512];
    char *json = report_json("report.json", path, sizeof path);
    CHECKF(json, "cannot write or read %s", path);
    char *site = strstr(json, "\"name\": \"toySetErrno\"");
    CHECKF(site, "no toySetErrno row in %s", path);
    char *next = strstr(site + 1, "\"name\": \"toy");
    if (next) *next = '\0';
    CHECKF(strstr(site, "{\"name\": \"TOY_ERROR_TIMEOUT\", \"code\": -5, \"calls\": 7, \"kind\": \"state\"}") &&
               strstr(site, "{\"name\": \"TOY_ERROR_INVALID_VALUE\", \"code\": -2, \"calls\": 5, \"kind\": \"error\"}"),
           "the codes by name are not in the row: %s", site);
    return 0;
}

/* ---- nested inside a counted call ------------------------------------------- */

static void TOY_APICALL nested_callback(toy_device_t d, void *user)
{
    (void)d;
    int *ok = user;
    errno = 0;
    *ok = toyNop(41) == 41 && toySetErrno(5, TOY_SUCCESS) == TOY_SUCCESS && errno == 5;
}

static int test_call_from_a_callback_inside_a_counted_call_is_nested(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    for (int cfg = CFG_COUNTED; cfg <= CFG_DETECT; cfg++) {
        CHECK(set_config(cfg) == 0);
        CHECK(cg_reset_stats() == CG_OK);
        int ok = 0;
        CHECK(toyRunCallback(dev(0), nested_callback, &ok) == TOY_SUCCESS);
        CHECK(ok == 1);
        cg_site_stats s;
        CHECK(cg_get_stats("toyRunCallback", &s) == CG_OK);
        CHECKF(s.calls == 1 && s.nested == 0, "%s: toyRunCallback calls %lu nested %lu", cfg_name[cfg],
               (unsigned long)s.calls, (unsigned long)s.nested);
        CHECK(cg_get_stats("toyNop", &s) == CG_OK);
        CHECKF(s.calls == 1 && s.nested == 1, "%s: toyNop calls %lu nested %lu", cfg_name[cfg], (unsigned long)s.calls,
               (unsigned long)s.nested);
        /* After it, the thread is no longer inside a call: counted, not nested. */
        toyNop(1);
        CHECK(cg_get_stats("toyNop", &s) == CG_OK);
        CHECKF(s.calls == 2 && s.nested == 1, "%s: after: toyNop calls %lu nested %lu", cfg_name[cfg],
               (unsigned long)s.calls, (unsigned long)s.nested);
    }
    return 0;
}

/* ---- a stall found on the counted path ---------------------------------------- */

/* With an adapter detecting (CGI_PATH_DETECT, the counted mode), a call as
 * long as a stall made holding the runtime is counted and recorded with
 * its entry point; one of a site that was never called before takes the
 * general path, so the site is called once first. */
static int test_stall_on_the_counted_path_is_counted_and_named(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_set_stall_ms(20) == CG_OK);
    CHECK(cg_set_adapter(&holding_adapter, CG_ADAPTER_DETECT) == CG_OK);
    toy_device_t d = dev(0);
    CHECK(toyWait(d, 0) == TOY_SUCCESS); /* resolves the site */
    CHECK(cg_reset_stats() == CG_OK);
    CHECK(toyWait(d, 40) == TOY_SUCCESS);
    CHECK(toyWait(d, 0) == TOY_SUCCESS);
    cg_site_stats s;
    CHECK(cg_get_stats("toyWait", &s) == CG_OK);
    CHECKF(s.calls == 2 && s.stalls == 1 && s.stall_ns >= 20000000u && s.max_ns >= 20000000u,
           "calls %lu stalls %lu stall_ns %lu", (unsigned long)s.calls, (unsigned long)s.stalls,
           (unsigned long)s.stall_ns);
    char path[512];
    char *json = report_json("stall.json", path, sizeof path);
    CHECKF(json, "cannot write or read %s", path);
    const char *st = strstr(json, "\"stalls\": [");
    CHECKF(st && strstr(st, "{\"api\": \"toy\", \"name\": \"toyWait\", \"ns\": "), "no toyWait stall in %s", path);
    CHECKF(strstr(st, "\"runtime\": \"holding\""), "the stall does not name the runtime held: %s", st);
    /* No adapter: the same long call is no stall. */
    CHECK(cg_set_adapter(NULL, CG_ADAPTER_DETECT) == CG_OK);
    CHECK(cg_reset_stats() == CG_OK);
    CHECK(toyWait(d, 40) == TOY_SUCCESS);
    CHECK(cg_get_stats("toyWait", &s) == CG_OK);
    CHECKF(s.calls == 1 && s.stalls == 0, "no adapter: calls %lu stalls %lu", (unsigned long)s.calls,
           (unsigned long)s.stalls);
    return 0;
}

/* ---- the policy changed under counted calls --------------------------------- */

#define CHANGE_THREADS 4
static atomic_int change_stop;
static pthread_barrier_t change_start;

static void *change_caller(void *arg)
{
    long *mine = arg;
    int32_t sum;
    pthread_barrier_wait(&change_start);
    while (!atomic_load(&change_stop)) {
        for (int i = 0; i < 100; i++) {
            if (toyAdd(i, 1, &sum) != TOY_SUCCESS || sum != i + 1) {
                *mine = -1;
                return NULL;
            }
            errno = 0;
            if (toySetErrno(i + 1, TOY_SUCCESS) != TOY_SUCCESS || errno != i + 1) {
                *mine = -2;
                return NULL;
            }
        }
        *mine += 100;
    }
    return NULL;
}

static int test_policy_changes_under_counted_calls_keep_counts_exact(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_reset_stats() == CG_OK);
    pthread_t t[CHANGE_THREADS];
    long calls[CHANGE_THREADS] = {0};
    pthread_barrier_init(&change_start, NULL, CHANGE_THREADS + 1);
    for (int i = 0; i < CHANGE_THREADS; i++)
        pthread_create(&t[i], NULL, change_caller, &calls[i]);
    pthread_barrier_wait(&change_start);
    double end = cgtest_now() + 1.0;
    int rounds = 0;
    while (cgtest_now() < end) {
        /* Each change moves the sites between the short paths and the general one. */
        CHECK(cg_serialize("toyAdd", rounds % 2 ? "adds" : NULL, CG_SCOPE_PROCESS) == CG_OK);
        CHECK(cg_set_adapter(rounds % 3 == 1 ? &holding_adapter : NULL,
                             rounds % 4 == 1 ? CG_ADAPTER_ACTIVE : CG_ADAPTER_DETECT) == CG_OK);
        CHECK(cg_set_transition("toySetErrno", (cg_transition)(rounds % 3)) == CG_OK);
        CHECK(cg_serialize("toySetErrno", rounds % 5 == 2 ? "e" : NULL, CG_SCOPE_HANDLE) == CG_OK);
        cgtest_sleep_ms(2);
        rounds++;
    }
    atomic_store(&change_stop, 1);
    long total = 0;
    for (int i = 0; i < CHANGE_THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECKF(calls[i] >= 0, "thread %d saw a wrong result or errno (%ld)", i, calls[i]);
        total += calls[i];
    }
    CHECK(cg_set_adapter(NULL, CG_ADAPTER_DETECT) == CG_OK);
    cg_site_stats s;
    CHECK(cg_get_stats("toyAdd", &s) == CG_OK);
    CHECKF((long)s.calls == total && s.errors == 0 && s.nested == 0, "toyAdd calls %lu, the threads made %ld",
           (unsigned long)s.calls, total);
    CHECK(cg_get_stats("toySetErrno", &s) == CG_OK);
    CHECKF((long)s.calls == total && s.errors == 0 && s.nested == 0, "toySetErrno calls %lu, the threads made %ld",
           (unsigned long)s.calls, total);
    CHECK(rounds > 20 && total > 1000);
    return 0;
}

/* A layer generated for the ABI before this one (whose wrappers know no
 * cg_site_counted: they would never count a plain counted call) is refused
 * with a message, as any other ABI: none of its sites exists. */
static int test_a_layer_of_the_previous_abi_is_refused(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const cg_site_default defaults[] = {{.name = "oldabiNop"}};
    static cg_site sites[1];
    static cg_layer old = {.abi = CG_LAYER_ABI - 1,
                           .api = "oldabi",
                           .prefixes = "oldabi",
                           .library_env = "CALLGUARD_OLDABI_LIBRARY",
                           .nsites = 1,
                           .sites = sites,
                           .defaults = defaults};
    cg_layer_register(&old);
    cg_site_stats s;
    CHECK(cg_get_stats("toyNop", &s) == CG_OK);
    CHECK(cg_get_stats("oldabiNop", &s) != CG_OK);
    CHECK(sites[0].layer == NULL);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"a_layer_of_the_previous_abi_is_refused", test_a_layer_of_the_previous_abi_is_refused},
    {"every_path_counts_results_and_keeps_errno", test_every_path_counts_results_and_keeps_errno},
    {"call_from_a_callback_inside_a_counted_call_is_nested", test_call_from_a_callback_inside_a_counted_call_is_nested},
    {"policy_changes_under_counted_calls_keep_counts_exact", test_policy_changes_under_counted_calls_keep_counts_exact},
    {"stall_on_the_counted_path_is_counted_and_named", test_stall_on_the_counted_path_is_counted_and_named},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
