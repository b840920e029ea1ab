/* Level Zero scenarios on the real loader and the simulator driver. Each
 * case runs a scenario program as a child (so a SIGABRT can be observed and
 * LD_PRELOAD takes effect) and checks how it ended. The loader mode
 * (direct, ZE_ENABLE_LOADER_INTERCEPT=1, ZE_ENABLE_TRACING_LAYER=1) and the
 * CGSIM_* settings come from ctest's environment and pass to the child. */
#include "../cgtest.h"

#include <signal.h>
#include <sys/wait.h>

/* In sanitizer builds the programs are instrumented and their runtime must
 * come first in the library list: an LD_PRELOAD names it before the layer. */
#ifndef CG_SANITIZER_PRELOAD
#define CG_SANITIZER_PRELOAD ""
#endif

static const char *preload(const char *layers)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "LD_PRELOAD=%s%s%s", CG_SANITIZER_PRELOAD, CG_SANITIZER_PRELOAD[0] ? ":" : "", layers);
    return buf;
}

static void show(const cgtest_result *r)
{
    fprintf(stderr, "-- child stdout:\n%s-- child stderr:\n%s--\n", r->out, r->err);
}

static int died_of_sigabrt(const cgtest_result *r)
{
    show(r);
    CHECKF(WIFSIGNALED(r->status) && WTERMSIG(r->status) == SIGABRT, "expected death by SIGABRT, wait status 0x%x",
           r->status);
    return 0;
}

static int created_all(const cgtest_result *r)
{
    show(r);
    CHECKF(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0, "expected exit 0, wait status 0x%x", r->status);
    CHECK(strstr(r->out, "created 16 modules") != NULL);
    return 0;
}

/* argv: PROG (linked against the real loader) */
static int ze_compile_race_aborts_without_callguard(int argc, char **argv)
{
    CHECK(argc == 1);
    cgtest_result r;
    const char *args[] = {argv[0], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    return died_of_sigabrt(&r);
}

/* argv: PROG LAYER: the environment `callguard run --serialize zeModuleCreate` sets. */
static int ze_compile_race_preloaded_serialized_creates_all(int argc, char **argv)
{
    CHECK(argc == 2);
    cgtest_result r;
    const char *env[] = {preload(argv[1]), "CALLGUARD_SERIALIZE=zeModuleCreate", NULL};
    const char *args[] = {argv[0], NULL};
    CHECK(cgtest_run(&r, env, args) == 0);
    return created_all(&r);
}

/* argv: PROG (linked against libcallguard_ze.so in place of the loader) */
static int ze_compile_race_linked_without_policy_aborts(int argc, char **argv)
{
    CHECK(argc == 1);
    cgtest_result r;
    const char *args[] = {argv[0], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    return died_of_sigabrt(&r);
}

static int ze_compile_race_linked_c_api_serialize_creates_all(int argc, char **argv)
{
    CHECK(argc == 1);
    cgtest_result r;
    const char *args[] = {argv[0], "capi", NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    return created_all(&r);
}

const cgtest_case cgtest_cases[] = {
    {"ze_compile_race_aborts_without_callguard", ze_compile_race_aborts_without_callguard},
    {"ze_compile_race_preloaded_serialized_creates_all", ze_compile_race_preloaded_serialized_creates_all},
    {"ze_compile_race_linked_without_policy_aborts", ze_compile_race_linked_without_policy_aborts},
    {"ze_compile_race_linked_c_api_serialize_creates_all", ze_compile_race_linked_c_api_serialize_creates_all},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
