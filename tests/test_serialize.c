/* Behaviour tests of serialization through the generated toy layer: the
 * compile race with and without it (the C API, the environment, a policy
 * file), a handle's scope, nested calls, and a policy or a domain changed
 * while threads call. The binary links libcallguard_toy.so in place of the
 * toy library, as a user links a layer in place of the vendor library. */
#define _GNU_SOURCE
#include "cgtest.h"
#include "toy_helpers.h"

#include <callguard/callguard.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>

static int test_unserialized_compile_race_aborts(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    const char *args[] = {"plain", NULL};
    CHECK(cgtest_child(&r, NULL, "child_compile_race", args) == 0);
    CHECKF(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT, "status 0x%x, stderr: %s", r.status, r.err);
    return 0;
}

static int test_serialized_compile_race_finishes(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    const char *api[] = {"api", NULL};
    CHECK(cgtest_child(&r, NULL, "child_compile_race", api) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "C API: status 0x%x, stderr: %s", r.status, r.err);
    CHECK(strstr(r.out, "compiles=8 max_inside=1"));

    const char *env[] = {"CALLGUARD_SERIALIZE=toyCompile", NULL};
    const char *plain[] = {"plain", NULL};
    CHECK(cgtest_child(&r, env, "child_compile_race", plain) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "env: status 0x%x, stderr: %s", r.status, r.err);

    char path[512];
    snprintf(path, sizeof path, "%s/serialize.ini", cgtest_tmpdir());
    FILE *f = fopen(path, "w");
    CHECK(f);
    fputs("[toyCompile]\nserialize = igc\n", f);
    fclose(f);
    char var[600];
    snprintf(var, sizeof var, "CALLGUARD_POLICY=%s", path);
    const char *penv[] = {var, NULL};
    CHECK(cgtest_child(&r, penv, "child_compile_race", plain) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "policy file: status 0x%x, stderr: %s", r.status, r.err);
    return 0;
}

/* ---- handle scope -------------------------------------------------------------- */

static int test_handle_scope_serializes_per_handle(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_serialize("toyCompile", "per-device", CG_SCOPE_HANDLE) == CG_OK);
    toyResetStats();
    /* 8 threads over 2 devices: would abort if two met on one device. */
    CHECK(run_race(8, 2, 30000) == 0);
    toy_stats_t st;
    toyGetStats(&st);
    CHECK(st.compiles == 8);
    CHECKF(st.max_inside == 2, "max_inside %u: two devices should compile at once", st.max_inside);
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

/* ---- nesting ----------------------------------------------------------------- */

static void TOY_APICALL nested_callback(toy_device_t d, void *user)
{
    toy_program_t p = NULL;
    /* Same domain as the outer call: would deadlock if not passed straight through. */
    *(int *)user = toyCompile(d, "inner", 0, &p) == TOY_SUCCESS && toyNop(7) == 7;
    toyProgramRelease(p);
}

static int test_nested_call_does_not_deadlock(int argc, char **argv)
{
    (void)argc, (void)argv;
    alarm(20);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_serialize("toyRunCallback", "d", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyCompile", "d", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyNop", "d", CG_SCOPE_PROCESS) == CG_OK);
    int ok = 0;
    CHECK(toyRunCallback(dev(0), nested_callback, &ok) == TOY_SUCCESS);
    CHECK(ok == 1);
    cg_site_stats s;
    CHECK(cg_get_stats("toyCompile", &s) == CG_OK);
    CHECK(s.calls == 1 && s.nested == 1);
    CHECK(cg_get_stats("toyNop", &s) == CG_OK);
    CHECK(s.calls == 1 && s.nested == 1);
    CHECK(cg_get_stats("toyRunCallback", &s) == CG_OK);
    CHECK(s.calls == 1 && s.nested == 0);
    return 0;
}

/* ---- a policy changed while threads call ------------------------------------ */

enum { PHASE_FREE, PHASE_DRAIN, PHASE_SHARED, PHASE_STOP };
static atomic_int live_phase;
static atomic_int live_acks;
static atomic_int live_drain_gen; /* each drain is acknowledged once per compiler */
static atomic_long live_calls;

static int my_holds(void) { return 1; }
static void my_outside(void (*fn)(void *), void *arg) { fn(arg); }
static const cg_adapter my_adapter = {"test", my_holds, my_outside};

static void *live_compiler(void *arg)
{
    int id = (int)(intptr_t)arg;
    int acked = 0;
    for (;;) {
        int ph = atomic_load(&live_phase);
        if (ph == PHASE_STOP) break;
        if (ph == PHASE_DRAIN) {
            int gen = atomic_load(&live_drain_gen);
            if (acked != gen) atomic_fetch_add(&live_acks, 1);
            acked = gen;
            sched_yield();
            continue;
        }
        toy_program_t p = NULL;
        /* Shared phase: every thread compiles on device 0, safe only while serialized. */
        toy_device_t d = dev(ph == PHASE_SHARED ? 0u : (uint32_t)id);
        if (toyCompile(d, "k", 200, &p) == TOY_SUCCESS) toyProgramRelease(p);
        atomic_fetch_add(&live_calls, 1);
    }
    return NULL;
}

static void *live_caller(void *arg)
{
    (void)arg;
    int32_t sum;
    while (atomic_load(&live_phase) != PHASE_STOP) {
        toyAdd(1, 2, &sum);
        toyNop(1);
        atomic_fetch_add(&live_calls, 1);
    }
    return NULL;
}

static void live_drain(int ncompilers)
{
    atomic_store(&live_acks, 0);
    atomic_fetch_add(&live_drain_gen, 1);
    atomic_store(&live_phase, PHASE_DRAIN);
    while (atomic_load(&live_acks) < ncompilers)
        sched_yield();
}

static int test_policy_change_while_calling(int argc, char **argv)
{
    (void)argc, (void)argv;
    enum { NC = 4, NA = 4 };
    pthread_t t[NC + NA];
    atomic_store(&live_phase, PHASE_FREE);
    for (int i = 0; i < NC; i++)
        pthread_create(&t[i], NULL, live_compiler, (void *)(intptr_t)i);
    for (int i = 0; i < NA; i++)
        pthread_create(&t[NC + i], NULL, live_caller, NULL);
    double end = cgtest_now() + 1.5;
    int rounds = 0;
    while (cgtest_now() < end) {
        /* Serialize, then let every compiler share one device (after the
         * unserialized calls on their own devices have finished). */
        live_drain(NC);
        CHECK(cg_serialize("toyCompile", rounds % 2 ? "a" : "b", CG_SCOPE_PROCESS) == CG_OK);
        atomic_store(&live_phase, PHASE_SHARED);
        CHECK(cg_stats_enable(rounds % 3 == 0) == CG_OK);
        CHECK(cg_set_adapter(rounds % 2 ? &my_adapter : NULL, CG_ADAPTER_ACTIVE) == CG_OK);
        CHECK(cg_set_transition("toyAdd", (cg_transition)(rounds % 3)) == CG_OK);
        CHECK(cg_serialize("toyAdd", rounds % 2 ? "adds" : NULL, CG_SCOPE_PROCESS) == CG_OK);
        cgtest_sleep_ms(20);
        /* Back to one device each before the lock goes away. */
        live_drain(NC);
        CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
        atomic_store(&live_phase, PHASE_FREE);
        cgtest_sleep_ms(10);
        rounds++;
    }
    atomic_store(&live_phase, PHASE_STOP);
    for (int i = 0; i < NC + NA; i++)
        pthread_join(t[i], NULL);
    CHECK(cg_set_adapter(NULL, CG_ADAPTER_DETECT) == CG_OK);
    CHECK(rounds > 5 && atomic_load(&live_calls) > 1000);
    return 0;
}

/* One value naming a not-yet-loaded entry point twice: kept once, and the
 * CG_PENDING message is intact (it was read from a freed setting; found by
 * tests/fuzz/fuzz_env.c). */
static int test_same_name_twice_in_one_value_is_kept(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_configure("CALLGUARD_SERIALIZE", "lateFn,lateFn=d2") == CG_PENDING);
    CHECKF(strstr(cg_last_error(), "'lateFn'") != NULL, "message: %s", cg_last_error());
    CHECK(cg_configure("CALLGUARD_SERIALIZE", "lateFn") == CG_PENDING);
    return 0;
}

/* ---- a domain changed while a call is inside ------------------------------------ */

typedef struct {
    toy_device_t dev;
    uint32_t sleep_us;
    double returned; /* read after the join */
    toy_result_t rc;
    atomic_int done; /* read while the thread runs */
} domain_call;

static void *domain_compile(void *p)
{
    domain_call *c = p;
    toy_program_t prog = NULL;
    c->rc = toyCompile(c->dev, "k", c->sleep_us, &prog);
    c->returned = cgtest_now();
    atomic_store(&c->done, 1);
    if (prog) toyProgramRelease(prog);
    return NULL;
}

/* docs/configuration.md: a call already inside finishes under the domain it
 * started with (it holds, and releases, that domain's lock); calls that
 * start after the change take the new domain's lock. So a call under the
 * old domain and one under the new can be inside together. Two devices:
 * the toy compiler races only on one device; max_inside counts all. */
static int test_domain_change_lets_the_call_inside_finish_under_its_domain(int argc, char **argv)
{
    (void)argc, (void)argv;
    toy_device_t d0, d1;
    CHECK(toyGetDevice(0, &d0) == TOY_SUCCESS && toyGetDevice(1, &d1) == TOY_SUCCESS);
    toyResetStats();
    CHECK(cg_serialize("toyCompile", "a", CG_SCOPE_PROCESS) == CG_OK);
    domain_call first = {d0, 600000, 0, -1, 0}, second = {d1, 1000, 0, -1, 0};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, domain_compile, &first);
    toy_stats_t st;
    for (int i = 0; i < 2000 && (toyGetStats(&st), st.max_inside) == 0; i++)
        cgtest_sleep_ms(1);
    CHECKF(st.max_inside == 1, "the first call is inside under domain a (max_inside %u)", st.max_inside);
    CHECK(cg_serialize("toyCompile", "b", CG_SCOPE_PROCESS) == CG_OK);
    pthread_create(&t2, NULL, domain_compile, &second);
    pthread_join(t2, NULL);
    double second_done = cgtest_now();
    toyGetStats(&st);
    CHECKF(!atomic_load(&first.done), "the call under b did not wait for the one inside under a");
    CHECKF(st.max_inside == 2, "both were inside together (max_inside %u)", st.max_inside);
    pthread_join(t1, NULL);
    CHECK(first.rc == TOY_SUCCESS && second.rc == TOY_SUCCESS && first.returned > second_done);
    /* The first call released a's lock, not b's: both domains are free. */
    for (int k = 0; k < 2; k++) {
        CHECK(cg_serialize("toyCompile", k ? "b" : "a", CG_SCOPE_PROCESS) == CG_OK);
        domain_call c = {d0, 1000, 0, -1, 0};
        domain_compile(&c);
        CHECK(c.rc == TOY_SUCCESS);
    }
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

/* ---- shared and exclusive in one domain (issue 53) ---------------------------------- */

typedef struct {
    int compile;     /* toyCompile (exclusive), else toyWait (shared) */
    uint32_t ms;     /* how long it stays in the driver */
    double returned; /* read after the join */
} sx_call;

static void *sx_run(void *p)
{
    sx_call *c = p;
    toy_program_t prog = NULL;
    if (c->compile)
        toyCompile(dev(0), "k", c->ms * 1000, &prog);
    else
        toyWait(dev(1), c->ms);
    c->returned = cgtest_now();
    if (prog) toyProgramRelease(prog);
    return NULL;
}

/* Waits (at most 5 s) until `site`'s peak inside (waiting: its peak waiting) reaches 1. */
static int sx_seen(const char *site, int waiting)
{
    cg_site_stats s = {0};
    for (int i = 0; i < 5000; i++, cgtest_sleep_ms(1))
        if (cg_get_stats(site, &s) == CG_OK && (waiting ? s.peak_waiting : s.peak_inside) >= 1) return 1;
    return 0;
}

/* toyWait shared and toyCompile exclusive in domain "sx": four waits are
 * inside together; a compile waits for the wait inside to leave. */
static int test_shared_scope_lets_shared_calls_in_together_and_an_exclusive_one_alone(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_serialize("toyWait", "sx", CG_SCOPE_SHARED) == CG_OK);
    CHECK(cg_serialize("toyCompile", "sx", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_reset_stats() == CG_OK);
    sx_call w[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        w[i] = (sx_call){0, 300, 0}, pthread_create(&t[i], NULL, sx_run, &w[i]);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    cg_site_stats s;
    CHECK(cg_get_stats("toyWait", &s) == CG_OK);
    CHECKF(s.peak_inside >= 2, "shared calls one at a time: peak inside %u", s.peak_inside);

    CHECK(cg_reset_stats() == CG_OK);
    sx_call held = {0, 300, 0}, alone = {1, 1, 0};
    pthread_create(&t[0], NULL, sx_run, &held);
    CHECK(sx_seen("toyWait", 0));
    sx_run(&alone);
    pthread_join(t[0], NULL);
    CHECK(cg_get_stats("toyCompile", &s) == CG_OK);
    CHECKF(s.lock_wait_ns > 0 && s.peak_waiting == 1, "the exclusive call did not wait for the shared one");
    CHECK(cg_serialize("toyWait", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

/* Writers first: while an exclusive call waits for the shared one inside,
 * a new shared call waits too, and returns after the exclusive one. */
static int test_waiting_exclusive_call_keeps_new_shared_calls_out(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_serialize("toyWait", "sx", CG_SCOPE_SHARED) == CG_OK);
    CHECK(cg_serialize("toyCompile", "sx", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_reset_stats() == CG_OK);
    sx_call first = {0, 400, 0}, writer = {1, 50, 0}, late = {0, 100, 0};
    pthread_t t1, t2, t3;
    pthread_create(&t1, NULL, sx_run, &first);
    CHECK(sx_seen("toyWait", 0));
    pthread_create(&t2, NULL, sx_run, &writer);
    CHECK(sx_seen("toyCompile", 1));
    pthread_create(&t3, NULL, sx_run, &late);
    pthread_join(t1, NULL), pthread_join(t2, NULL), pthread_join(t3, NULL);
    CHECKF(late.returned > writer.returned && writer.returned > first.returned,
           "order of returns: first %.3f, writer %.3f, late shared %.3f", first.returned, writer.returned,
           late.returned);
    CHECK(cg_serialize("toyWait", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

/* ---- a call left without returning (issue 32) ------------------------------------- */

#ifdef __SANITIZE_THREAD__
#define UNDER_TSAN 1
#else
#define UNDER_TSAN 0
#endif

static void *compile_once(void *arg)
{
    (void)arg;
    toy_program_t p = NULL;
    intptr_t ok = toyCompile(dev(0), "k", 0, &p) == TOY_SUCCESS;
    if (p) toyProgramRelease(p);
    return (void *)ok;
}

/* Compiles on another thread: 1 when it returned success within 5 s, 0 when
 * it did not return (a lock left held: the thread is left behind, asleep). */
static int compile_finishes(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, compile_once, NULL) != 0) return 0;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    void *ok = NULL;
    if (pthread_timedjoin_np(t, &ok, &until) != 0) return 0;
    return ok == (void *)1;
}

static void *wait_long(void *arg)
{
    (void)arg;
    toyWait(dev(1), 20000);
    return NULL;
}

/* Waits (at most 5 s) until `site` has counted `calls` calls. */
static int wait_for_calls(const char *site, uint64_t calls)
{
    cg_site_stats s = {0};
    for (int i = 0; i < 5000 && (cg_get_stats(site, &s), s.calls) < calls; i++)
        cgtest_sleep_ms(1);
    return s.calls >= calls;
}

static void TOY_APICALL exit_thread(toy_device_t d, void *user)
{
    (void)d, (void)user;
    pthread_exit(NULL);
}

static void *run_exit_callback(void *arg)
{
    (void)arg;
    toyRunCallback(dev(0), exit_thread, NULL);
    return NULL;
}

/* N1: a thread cancelled in the driver, or ending with pthread_exit in a
 * driver callback, while it holds the domain's lock: the lock is released
 * as the thread ends, and the site's threads inside do not count it. */
static int test_cancelled_thread_inside_serialized_call_releases_the_lock(int argc, char **argv)
{
    (void)argc, (void)argv;
    alarm(60);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_serialize("toyCompile", "n1", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyWait", "n1", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyRunCallback", "n1", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_reset_stats() == CG_OK);
    pthread_t t;
    /* (ThreadSanitizer misses what a cancelled thread does as it ends, and
     * reports the lock given back then as still held: there only the
     * pthread_exit half runs.) */
    if (!UNDER_TSAN) {
        CHECK(pthread_create(&t, NULL, wait_long, NULL) == 0);
        CHECK(wait_for_calls("toyWait", 1));
        cgtest_sleep_ms(50); /* asleep in the driver, holding n1 */
        CHECK(pthread_cancel(t) == 0);
        void *res = NULL;
        CHECK(pthread_join(t, &res) == 0 && res == PTHREAD_CANCELED);
        CHECKF(compile_finishes(), "a compile after the cancelled wait did not finish: n1 is still held");
        cg_site_stats s;
        CHECK(cg_reset_stats() == CG_OK);
        CHECK(toyWait(dev(1), 0) == TOY_SUCCESS);
        CHECK(cg_get_stats("toyWait", &s) == CG_OK);
        CHECKF(s.peak_inside == 1, "peak_inside %u: the cancelled call is still counted inside", s.peak_inside);
    }

    CHECK(pthread_create(&t, NULL, run_exit_callback, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    CHECKF(compile_finishes(), "a compile after pthread_exit in a callback did not finish: n1 is still held");
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyWait", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyRunCallback", NULL, CG_SCOPE_PROCESS) == CG_OK);
    alarm(0);
    return 0;
}

static sigjmp_buf jump_back;

static void jump_out(int sig)
{
    (void)sig;
    siglongjmp(jump_back, 1);
}

/* A signal raised in the driver call, whose handler recovers by jumping out of it. */
static void TOY_APICALL raise_usr1(toy_device_t d, void *user)
{
    (void)d, (void)user;
    raise(SIGUSR1);
}

/* toyRunCallback, left by a siglongjmp from a handler of a signal raised inside it. */
static int jump_out_of_run_callback(void)
{
    if (sigsetjmp(jump_back, 1) == 0) {
        toyRunCallback(dev(0), raise_usr1, NULL);
        return 0; /* returned: the handler did not jump */
    }
    return 1;
}

/* N4: a longjmp out of a guarded call (a counted one, then a serialized one)
 * leaves the thread outside: its next calls are not nested (a serialized
 * one takes its lock), and the lock the call held is released. */
static int test_longjmp_out_of_a_guarded_call_leaves_the_thread_outside(int argc, char **argv)
{
    (void)argc, (void)argv;
    alarm(60);
    struct sigaction sa = {0}, old;
    sa.sa_handler = jump_out;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, &old) == 0);
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_serialize("toyCompile", "n4", CG_SCOPE_PROCESS) == CG_OK);
    cg_site_stats s;
    for (int serialized = 0; serialized < 2; serialized++) {
        CHECK(cg_serialize("toyRunCallback", serialized ? "n4" : NULL, CG_SCOPE_PROCESS) == CG_OK);
        CHECK(cg_reset_stats() == CG_OK);
        CHECK(jump_out_of_run_callback());
        toy_program_t p = NULL;
        CHECK(toyCompile(dev(0), "k", 0, &p) == TOY_SUCCESS);
        toyProgramRelease(p);
        CHECK(toyNop(3) == 3);
        CHECK(cg_get_stats("toyCompile", &s) == CG_OK);
        CHECKF(s.calls == 1 && s.nested == 0, "%s: toyCompile calls %lu nested %lu: the thread is still inside",
               serialized ? "serialized" : "counted", (unsigned long)s.calls, (unsigned long)s.nested);
        CHECK(cg_get_stats("toyNop", &s) == CG_OK);
        CHECKF(s.calls == 1 && s.nested == 0, "%s: toyNop calls %lu nested %lu", serialized ? "serialized" : "counted",
               (unsigned long)s.calls, (unsigned long)s.nested);
        CHECKF(compile_finishes(), "%s: another thread's compile did not finish: n4 is still held",
               serialized ? "serialized" : "counted");
    }
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyRunCallback", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(sigaction(SIGUSR1, &old, NULL) == 0);
    alarm(0);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"child_compile_race", child_compile_race},
    {"unserialized_compile_race_aborts", test_unserialized_compile_race_aborts},
    {"serialized_compile_race_finishes", test_serialized_compile_race_finishes},
    {"handle_scope_serializes_per_handle", test_handle_scope_serializes_per_handle},
    {"nested_call_does_not_deadlock", test_nested_call_does_not_deadlock},
    {"policy_change_while_calling", test_policy_change_while_calling},
    {"same_name_twice_in_one_value_is_kept", test_same_name_twice_in_one_value_is_kept},
    {"domain_change_lets_the_call_inside_finish_under_its_domain",
     test_domain_change_lets_the_call_inside_finish_under_its_domain},
    {"shared_scope_lets_shared_calls_in_together_and_an_exclusive_one_alone",
     test_shared_scope_lets_shared_calls_in_together_and_an_exclusive_one_alone},
    {"waiting_exclusive_call_keeps_new_shared_calls_out", test_waiting_exclusive_call_keeps_new_shared_calls_out},
    {"cancelled_thread_inside_serialized_call_releases_the_lock",
     test_cancelled_thread_inside_serialized_call_releases_the_lock},
    {"longjmp_out_of_a_guarded_call_leaves_the_thread_outside",
     test_longjmp_out_of_a_guarded_call_leaves_the_thread_outside},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
