/* Behaviour tests of the once scope (FN:once): a site serialized until its
 * first call that succeeds, then unguarded. Through the generated toy
 * layer: its compiler aborts when two threads are inside it on one device,
 * and fails a source that says "error". The domain's lock is taken while
 * the gate is closed; a failure keeps it closed; the opening is kept in
 * the statistics and the report; a forked child's gate is its own. */
#define _GNU_SOURCE
#include "cgtest.h"
#include "toy_helpers.h"

#include <callguard/callguard.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* toyCompile's domain as the loaded layers see it now ("" when open or
 * never serialized), and its scope. */
static const char *compile_domain(cg_scope *scope)
{
    static cg_site_info v[64];
    long n = cg_list_sites("toy", v, 64);
    for (long i = 0; i < n && i < 64; i++)
        if (strcmp(v[i].name, "toyCompile") == 0) {
            if (scope) *scope = v[i].scope;
            return v[i].domain;
        }
    return NULL;
}

typedef struct job {
    pthread_barrier_t *start;
    uint32_t device;
    const char *source;
    uint32_t sleep_us;
    toy_result_t result;
} job;

static void *compile_job(void *arg)
{
    job *j = arg;
    toy_program_t p = NULL;
    pthread_barrier_wait(j->start);
    j->result = toyCompile(dev(j->device), j->source, j->sleep_us, &p);
    if (j->result == TOY_SUCCESS) toyProgramRelease(p);
    return NULL;
}

/* n threads compile `source` at once, thread i on device i % devices;
 * returns how many succeeded. */
static int compile_at_once(int n, uint32_t devices, const char *source, uint32_t sleep_us)
{
    pthread_t t[16];
    job j[16];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        j[i] = (job){.start = &start, .device = (uint32_t)i % devices, .source = source, .sleep_us = sleep_us};
        pthread_create(&t[i], NULL, compile_job, &j[i]);
    }
    int ok = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(t[i], NULL);
        ok += j[i].result == TOY_SUCCESS;
    }
    pthread_barrier_destroy(&start);
    return ok;
}

static int compile_one(const char *source)
{
    toy_program_t p = NULL;
    toy_result_t r = toyCompile(dev(0), source, 0, &p);
    if (r == TOY_SUCCESS) toyProgramRelease(p);
    return r == TOY_SUCCESS;
}

static int test_once_gate_stays_closed_after_failures_and_opens_at_first_success(int argc, char **argv)
{
    (void)argc, (void)argv;
    cg_scope scope = CG_SCOPE_PROCESS;
    CHECK(cg_serialize("toyCompile", "first-compile", CG_SCOPE_ONCE) == CG_OK);
    CHECK(strcmp(compile_domain(&scope), "first-compile") == 0 && scope == CG_SCOPE_ONCE);
    /* Closed: four failing compiles on one device at once would abort unserialized. */
    toyResetStats();
    CHECK(compile_at_once(4, 1, "error here", 20000) == 0);
    CHECKF(strcmp(compile_domain(NULL), "first-compile") == 0, "a failure opened it: domain '%s'",
           compile_domain(NULL));
    /* Still closed: two devices, which never race, are serialized too. */
    CHECK(compile_at_once(2, 2, "error again", 50000) == 0);
    toy_stats_t st;
    toyGetStats(&st);
    CHECKF(st.max_inside == 1, "max_inside %u while closed", st.max_inside);
    /* The first success opens it: the site is unguarded from then on. */
    CHECK(compile_one("kernel"));
    CHECKF(strcmp(compile_domain(&scope), "") == 0 && scope == CG_SCOPE_ONCE, "after a success: domain '%s'",
           compile_domain(NULL));
    toyResetStats();
    CHECK(compile_at_once(2, 2, "kernel", 50000) == 2);
    toyGetStats(&st);
    CHECKF(st.max_inside == 2, "max_inside %u: two devices should compile at once once open", st.max_inside);
    /* A new setting closes it again. */
    CHECK(cg_serialize("toyCompile", "first-compile", CG_SCOPE_ONCE) == CG_OK);
    CHECK(strcmp(compile_domain(NULL), "first-compile") == 0);
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

/* The report says which call opened it: calls 1-3 failed, call 4 opened it. */
static int test_once_gate_opening_is_in_the_report(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_reset_stats() == CG_OK);
    CHECK(cg_serialize("toyCompile", "first-compile", CG_SCOPE_ONCE) == CG_OK);
    char path[512];
    snprintf(path, sizeof path, "%s/once.json", cgtest_tmpdir());
    CHECK(cg_report_write(path, CG_REPORT_JSON) == CG_OK);
    CHECK(!compile_one("error 1") && !compile_one("error 2") && !compile_one("error 3"));
    CHECK(cg_report_write(path, CG_REPORT_JSON) == CG_OK);
    char *json = slurp(path);
    CHECKF(json && strstr(json, "\"serialize\": \"first-compile\", \"scope\": \"once\", \"opened_at_call\": null"),
           "closed: %s", json ? json : "(unreadable)");
    CHECK(compile_one("kernel") && compile_one("kernel") && compile_one("kernel"));
    CHECK(cg_report_write(path, CG_REPORT_JSON) == CG_OK);
    json = slurp(path);
    CHECKF(json && strstr(json, "\"serialize\": \"first-compile\", \"scope\": \"once\", \"opened_at_call\": 4"),
           "opened: %s", json ? json : "(unreadable)");
    /* A forked child's report: open before its first call. */
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        compile_one("kernel");
        _exit(cg_report_write(path, CG_REPORT_JSON) == CG_OK ? 0 : 1);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    json = slurp(path);
    CHECKF(json && strstr(json, "\"scope\": \"once\", \"opened_at_call\": 0"), "child: %s", json ? json : "-");
    snprintf(path, sizeof path, "%s/once.txt", cgtest_tmpdir());
    CHECK(cg_report_write(path, CG_REPORT_TEXT_ALL) == CG_OK);
    char *text = slurp(path);
    CHECKF(text && strstr(text, "serialize=first-compile:once until first success at call 4 of 6"), "text: %s",
           text ? text : "(unreadable)");
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_stats_enable(0) == CG_OK);
    return 0;
}

/* Four threads succeed at once on a closed gate: they take the lock in
 * turn, the first to return opens it, and the others' calls finish under
 * the policy they read. Run under ThreadSanitizer too, with a thread
 * closing another site's gate again and again while its calls open it. */
static atomic_int stop_setting;

static void *set_policy(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop_setting))
        if (cg_serialize("toyAdd", "first-add", CG_SCOPE_ONCE) != CG_OK) return (void *)1;
    return NULL;
}

static int test_once_gate_opens_once_when_many_first_calls_succeed_at_once(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_stats_enable(1) == CG_OK);
    CHECK(cg_reset_stats() == CG_OK);
    for (int round = 0; round < 5; round++) {
        CHECK(cg_serialize("toyCompile", "first-compile", CG_SCOPE_ONCE) == CG_OK);
        toyResetStats();
        atomic_store(&stop_setting, 0);
        pthread_t setter;
        pthread_create(&setter, NULL, set_policy, NULL);
        /* Four devices, a thread each: they never race, the gate is what they share. */
        int ok = compile_at_once(4, 4, "kernel", 2000);
        int32_t sum = 0;
        CHECK(toyAdd(2, 3, &sum) == TOY_SUCCESS && sum == 5);
        atomic_store(&stop_setting, 1);
        void *bad;
        pthread_join(setter, &bad);
        CHECK(bad == NULL);
        CHECKF(ok == 4, "round %d: %d of 4 compiled", round, ok);
        CHECKF(strcmp(compile_domain(NULL), "") == 0, "round %d: still closed", round);
    }
    cg_site_stats s;
    CHECK(cg_get_stats("toyCompile", &s) == CG_OK && s.calls == 20);
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyAdd", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_stats_enable(0) == CG_OK);
    return 0;
}

/* A forked child starts with the gate as its parent had it, and opens its
 * own: the parent's stays closed. */
static int test_once_gate_of_a_forked_child_is_its_own(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_serialize("toyCompile", "first-compile", CG_SCOPE_ONCE) == CG_OK);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        int closed = strcmp(compile_domain(NULL), "first-compile") == 0;
        int ok = compile_one("kernel");
        int open = strcmp(compile_domain(NULL), "") == 0;
        _exit(closed && ok && open ? 0 : 1);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status 0x%x", status);
    CHECKF(strcmp(compile_domain(NULL), "first-compile") == 0, "the child's success opened the parent's gate");
    /* Opened before the fork: open in the child, with its lock reset. */
    CHECK(compile_one("kernel"));
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) _exit(strcmp(compile_domain(NULL), "") == 0 && compile_one("kernel") ? 0 : 1);
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child of an open gate: status 0x%x", status);
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

/* A child case: the policy from the environment, read by a fresh process
 * (an exec'd program): closed until the first success in it. */
static int child_once_from_the_environment(int argc, char **argv)
{
    (void)argc, (void)argv;
    cg_scope scope = CG_SCOPE_PROCESS;
    if (strcmp(compile_domain(&scope), "toyCompile") != 0 || scope != CG_SCOPE_ONCE) return 3;
    if (compile_at_once(4, 1, "error", 10000) != 0) return 4;
    if (strcmp(compile_domain(NULL), "toyCompile") != 0) return 5;
    if (!compile_one("kernel")) return 6;
    if (strcmp(compile_domain(NULL), "") != 0) return 7;
    printf("opened\n");
    return 0;
}

static int test_once_gate_from_the_environment_is_closed_in_a_new_process(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    const char *env[] = {"CALLGUARD_SERIALIZE=toyCompile:once", NULL};
    const char *none[] = {NULL};
    CHECK(cgtest_child(&r, env, "child_once_from_the_environment", none) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && strstr(r.out, "opened"), "status 0x%x, stderr: %s",
           r.status, r.err);
    return 0;
}

/* A once-site may share a process-scoped domain (the same lock); a
 * handle-scoped one is refused, naming both scopes. */
static int test_once_joins_a_process_domain_and_not_a_handle_one(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_serialize("toyWait", "shared-once", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyCompile", "shared-once", CG_SCOPE_ONCE) == CG_OK);
    CHECK(cg_serialize("toyWait", "handles-once", CG_SCOPE_HANDLE) == CG_OK);
    CHECK(cg_serialize("toyCompile", "handles-once", CG_SCOPE_ONCE) == CG_EINVAL);
    CHECKF(strstr(cg_last_error(), "handle-scoped") && strstr(cg_last_error(), "scope once"), "message: %s",
           cg_last_error());
    CHECK(cg_serialize("toyWait", NULL, CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyCompile", NULL, CG_SCOPE_PROCESS) == CG_OK);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"once_gate_stays_closed_after_failures_and_opens_at_first_success",
     test_once_gate_stays_closed_after_failures_and_opens_at_first_success},
    {"once_gate_opening_is_in_the_report", test_once_gate_opening_is_in_the_report},
    {"once_gate_opens_once_when_many_first_calls_succeed_at_once",
     test_once_gate_opens_once_when_many_first_calls_succeed_at_once},
    {"once_gate_of_a_forked_child_is_its_own", test_once_gate_of_a_forked_child_is_its_own},
    {"child_once_from_the_environment", child_once_from_the_environment},
    {"once_gate_from_the_environment_is_closed_in_a_new_process",
     test_once_gate_from_the_environment_is_closed_in_a_new_process},
    {"once_joins_a_process_domain_and_not_a_handle_one", test_once_joins_a_process_domain_and_not_a_handle_one},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
