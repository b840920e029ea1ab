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
    static char buf[8192];
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

/* Runs the two-API program with both layers preloaded and reads its probe's counts. */
static int run_two_api(char **argv, const char *serialize, int *ze, int *cl, int *max, int *cross)
{
    char layers[2048];
    snprintf(layers, sizeof layers, "%s:%s", argv[1], argv[2]);
    cgtest_result r;
    const char *env[] = {preload(layers), serialize ? serialize : "CALLGUARD_SERIALIZE", NULL};
    const char *args[] = {argv[0], NULL};
    CHECK(cgtest_run(&r, env, args) == 0);
    show(&r);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "expected exit 0, wait status 0x%x", r.status);
    CHECK(sscanf(r.out, "ze=%d cl=%d max_inside=%d cross=%d", ze, cl, max, cross) == 4);
    CHECK(*ze == 8 && *cl == 8);
    return 0;
}

/* argv: PROG ZE_LAYER CL_LAYER. One lock for both APIs: with both entry
 * points in the domain igc, no compile of either API overlaps another. */
static int ze_cl_compiles_in_one_domain_never_overlap(int argc, char **argv)
{
    CHECK(argc == 3);
    int ze, cl, max, cross;
    if (run_two_api(argv, "CALLGUARD_SERIALIZE=zeModuleCreate=igc,clBuildProgram=igc", &ze, &cl, &max, &cross))
        return 1;
    CHECKF(max == 1 && cross == 0, "max_inside=%d cross=%d", max, cross);
    return 0;
}

/* The control: without the policy the same program's compiles overlap,
 * across the two APIs too, so the check above can fail. */
static int ze_cl_compiles_unserialized_overlap(int argc, char **argv)
{
    CHECK(argc == 3);
    int ze, cl, max, cross;
    if (run_two_api(argv, NULL, &ze, &cl, &max, &cross)) return 1;
    CHECKF(max > 1 && cross > 0, "max_inside=%d cross=%d", max, cross);
    return 0;
}

/* Runs PROG with extra environment, expects exit 0, copies its stdout. */
static int run_ok(const char *const *env, const char *const *args, char *out, size_t cap)
{
    cgtest_result r;
    CHECK(cgtest_run(&r, env, args) == 0);
    show(&r);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: expected exit 0, wait status 0x%x", args[0],
           r.status);
    snprintf(out, cap, "%s", r.out);
    return 0;
}

/* argv: PROG (linked against the loader) LAYER. The layer preloaded
 * forwards the loader's zel* functions and getters (which the loader itself
 * calls through its PLT, so they reach the layer): the program sees what it
 * sees without the layer. */
static int ze_passthrough_preloaded_same_as_loader(int argc, char **argv)
{
    CHECK(argc == 2);
    static char plain[8192], layered[8192];
    const char *args[] = {argv[0], NULL};
    const char *env[] = {preload(argv[1]), NULL};
    if (run_ok(NULL, args, plain, sizeof plain) || run_ok(env, args, layered, sizeof layered)) return 1;
    CHECK(strstr(plain, "pfnInit in ") != NULL);
    CHECKF(strcmp(plain, layered) == 0, "plain:\n%s\npreloaded:\n%s", plain, layered);
    return 0;
}

/* argv: PROG (linked against the loader) PROG_LINKED (against the layer). */
static int ze_passthrough_linked_same_as_loader(int argc, char **argv)
{
    CHECK(argc == 2);
    static char plain[8192], linked[8192];
    const char *a1[] = {argv[0], NULL}, *a2[] = {argv[1], NULL};
    if (run_ok(NULL, a1, plain, sizeof plain) || run_ok(NULL, a2, linked, sizeof linked)) return 1;
    CHECK(strstr(plain, "pfnInit in ") != NULL);
    CHECKF(strcmp(plain, linked) == 0, "plain:\n%s\nlinked:\n%s", plain, linked);
    return 0;
}

/* ---- the same scenarios through `callguard run` ---- */

/* argv: CALLGUARD PROG. `callguard run --serialize zeModuleCreate` lets every
 * module be created, and its report counts all 16 creations. */
static int ze_compile_race_callguard_run_serialized_creates_all(int argc, char **argv)
{
    CHECK(argc == 2);
    char report[512];
    snprintf(report, sizeof report, "%s/report.json", cgtest_tmpdir());
    cgtest_result r;
    const char *args[] = {argv[0], "run", "--serialize", "zeModuleCreate", "--report", report, "--", argv[1], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    if (created_all(&r)) return 1;
    FILE *f = fopen(report, "r");
    CHECK(f != NULL);
    static char json[1 << 16];
    size_t n = fread(json, 1, sizeof json - 1, f);
    fclose(f);
    json[n] = '\0';
    CHECKF(strstr(json, "\"name\": \"zeModuleCreate\", \"calls\": 16,") != NULL, "report: %.2000s", json);
    return 0;
}

/* argv: CALLGUARD PROG. Guarded but not serialized, the driver still
 * aborts, and `callguard run` dies of the same signal. */
static int ze_compile_race_callguard_run_unserialized_aborts(int argc, char **argv)
{
    CHECK(argc == 2);
    cgtest_result r;
    const char *args[] = {argv[0], "run", "--api", "ze", "--", argv[1], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    return died_of_sigabrt(&r);
}

/* argv: CALLGUARD PROG: the report of the run that died says which calls
 * it died inside, in its summary first: the simulator's compiler aborts
 * with two threads in zeModuleCreate, and those calls are counted though
 * they never returned (in the table of every column, --all). */
static int ze_compile_race_callguard_run_report_names_calls_in_flight(int argc, char **argv)
{
    CHECK(argc == 2);
    cgtest_result r;
    const char *args[] = {argv[0], "run", "--api", "ze", "--report", "-", "--all", "--", argv[1], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    if (died_of_sigabrt(&r)) return 1;
    const char *line = strstr(r.err, "died of SIGABRT with ");
    int n = 0;
    CHECKF(line && sscanf(line, "died of SIGABRT with %d threads inside zeModuleCreate", &n) == 1 && n >= 2,
           "the report names the calls in flight");
    CHECKF(strstr(r.err, "(killed by SIGABRT)"), "how it died, as callguard reaped it");
    char said[128];
    snprintf(said, sizeof said, "callguard: 1 process, killed by SIGABRT\n");
    const char *summary = strstr(r.err, said);
    snprintf(said, sizeof said, " ended with %d threads inside zeModuleCreate\n", n);
    CHECKF(summary && strstr(summary, said) && strstr(summary, said) < strstr(r.err, "callguard: pid "),
           "the summary says it first: %s", r.err);
    const char *table = strstr(r.err, "entry point"), *row = table ? strstr(table, " zeModuleCreate ") : NULL;
    unsigned long calls = 0;
    CHECKF(row && sscanf(row, " zeModuleCreate %lu", &calls) == 1 && calls >= (unsigned long)n,
           "the calls that never returned are counted: %lu", calls);
    return 0;
}

/* ---- the quirks file (docs/quirks.md), on the simulator reporting a chosen driver ---- */

#define NEO_IGC_2_38 "CGSIM_VENDOR_ID=0x8086", "CGSIM_DRIVER_VERSION=26.27.39122.11" /* ships IGC 2.38.2 */
#define NEO_IGC_2_40 "CGSIM_VENDOR_ID=0x8086", "CGSIM_DRIVER_VERSION=26.31.39395.13" /* ships IGC 2.40.13 */

static const char *read_file(const char *path)
{
    static char text[1 << 16];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) fclose(f);
    text[n] = '\0';
    return text;
}

static const char *write_quirks(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", cgtest_tmpdir(), name);
    FILE *f = fopen(path, "w");
    if (f) fputs(text, f), fclose(f);
    return path;
}

/* argv: CALLGUARD PROG. The simulator says it is NEO 26.27.39122.11 (IGC
 * 2.38.2); its compiler aborts on overlap (CGSIM_COMPILER_RACE=abort). With
 * no --serialize at all, the shipped quirk serializes zeModuleCreate, and
 * the report names it with its source and the identity it matched. */
static int ze_quirk_fixes_the_compile_race_on_an_affected_driver(int argc, char **argv)
{
    CHECK(argc == 2);
    char report[512];
    snprintf(report, sizeof report, "%s/report.json", cgtest_tmpdir());
    cgtest_result r;
    const char *env[] = {NEO_IGC_2_38, NULL};
    const char *args[] = {argv[0], "run", "--api", "ze", "--report", report, "--", argv[1], NULL};
    CHECK(cgtest_run(&r, env, args) == 0);
    if (created_all(&r)) return 1;
    const char *json = read_file(report);
    CHECKF(strstr(json, "\"quirks\": [\n       {\"name\": \"igc-2.38-zeModuleCreate\", \"api\": \"ze\"") != NULL,
           "report: %.3000s", json);
    CHECK(strstr(json, "\"source\": \"https://github.com/intel/intel-xpu-backend-for-triton/issues/7581\"") != NULL);
    /* the version as Level Zero gave it: BUILD.HOTFIX from zeIntelGetDriverVersionString where the
     * loader hands out the driver's own handles, else BUILD from driverVersion */
    CHECKF(strstr(json,
                  "\"matched\": {\"vendor\": \"0x8086\", \"driver\": \"callguard simulator\", \"version\": \"39122") !=
               NULL,
           "report: %.3000s", json);
    CHECK(strstr(json, "\"name\": \"zeModuleCreate\", \"calls\": 16,") != NULL);
    CHECK(strstr(json, "\"serialize\": \"igc\"") != NULL);
    return 0;
}

/* argv: CALLGUARD PROG. NEO 26.31.39395.13 ships IGC 2.40.13: no quirk
 * matches, nothing is serialized, and the simulator's race aborts. */
static int ze_quirk_stays_off_on_an_unaffected_driver(int argc, char **argv)
{
    CHECK(argc == 2);
    char report[512];
    snprintf(report, sizeof report, "%s/report.json", cgtest_tmpdir());
    cgtest_result r;
    const char *env[] = {NEO_IGC_2_40, NULL};
    const char *args[] = {argv[0], "run", "--api", "ze", "--report", report, "--", argv[1], NULL};
    CHECK(cgtest_run(&r, env, args) == 0);
    if (died_of_sigabrt(&r)) return 1;
    const char *json = read_file(report);
    /* (Its advice names the quirk: the run would meet it on IGC 2.38.) */
    CHECKF(strstr(json, "\"quirks\": []") != NULL && !strstr(json, "\"serialize\": \"igc\""), "report: %.3000s", json);
    return 0;
}

/* argv: CALLGUARD PROG. --quirks off: the affected driver races again. */
static int ze_quirks_off_leaves_the_affected_driver_racing(int argc, char **argv)
{
    CHECK(argc == 2);
    cgtest_result r;
    const char *env[] = {NEO_IGC_2_38, NULL};
    const char *args[] = {argv[0], "run", "--api", "ze", "--quirks", "off", "--", argv[1], NULL};
    CHECK(cgtest_run(&r, env, args) == 0);
    return died_of_sigabrt(&r);
}

/* argv: CALLGUARD PROG. A user's own quirks file, in the shipped file's
 * format, keyed on the simulator as it is (vendor 0x1de5, its device name,
 * driverVersion 1.2: build 2) replaces the shipped one: its fix applies,
 * and the text table names it. */
static int ze_quirks_user_file_applies_its_own_quirk(int argc, char **argv)
{
    CHECK(argc == 2);
    const char *file = write_quirks("mine.ini", "; a user's own quirk\n"
                                                "[quirk:sim-compiler]\n"
                                                "api       = ze\n"
                                                "vendor    = 0x1de5\n"
                                                "driver    = callguard sim*\n"
                                                "versions  = 1 .. 2\n"
                                                "serialize = zeModuleCreate\n"
                                                "domain    = simc\n"
                                                "source    = https://example.org/sim-compiler\n"
                                                "why       = the simulator's compiler is not reentrant\n");
    cgtest_result r;
    const char *args[] = {argv[0], "run", "--api", "ze", "--quirks", file, "--report", "-", "--", argv[1], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    if (created_all(&r)) return 1;
    CHECKF(strstr(r.err, "quirk sim-compiler applied: zeModuleCreate serialized in domain simc\n    matched ze driver "
                         "'callguard simulator' vendor 0x1de5 version 2") != NULL,
           "the table names the quirk");
    CHECK(strstr(r.err, "(https://example.org/sim-compiler)") != NULL);
    CHECK(strstr(r.err, "serialize=simc") != NULL);
    return 0;
}

/* ---- peaks and advice (docs/report.md): an unaffected driver, a run that
 * would meet a known bug elsewhere ---- */

/* The number after `"KEY": ` in the JSON object of site NAME; -1 when
 * absent or null. */
static long site_field(const char *json, const char *name, const char *key)
{
    char pat[128];
    snprintf(pat, sizeof pat, "\"name\": \"%s\", \"calls\"", name);
    const char *at = strstr(json, pat);
    if (!at) return -1;
    const char *end = strstr(at, "\"results\""); /* the site's object ends with its results */
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *k = strstr(at, pat);
    if (!k || (end && k > end)) return -1;
    k += strlen(pat);
    return *k >= '0' && *k <= '9' ? strtol(k, NULL, 10) : -1;
}

/* Runs the 16-thread compile on NEO 26.31 (IGC 2.40.13: no quirk matches,
 * the simulator's compiler does not abort) and reads its JSON report. */
static const char *run_unaffected(char **argv, const char *report, const char *serialize)
{
    cgtest_result r;
    const char *env[] = {NEO_IGC_2_40, "CGSIM_COMPILER_RACE=off", NULL};
    const char *plain[] = {argv[0], "run", "--api", "ze", "--report", report, "--", argv[1], NULL};
    const char *ser[] = {argv[0],    "run",  "--api", "ze",    "--serialize", serialize,
                         "--report", report, "--",    argv[1], NULL};
    if (cgtest_run(&r, env, serialize ? ser : plain) != 0 || created_all(&r)) return NULL;
    return read_file(report);
}

/* argv: CALLGUARD PROG. 16 threads create modules at once on a driver no
 * quirk names: the report counts them inside zeModuleCreate together, and
 * its advice names the IGC 2.38 bug that would abort them, with the fix;
 * zeInit, entered by one thread, gets none, and a cheap entry point's
 * peaks are not measured. */
static int ze_peaks_unaffected_driver_advises_the_igc_fix(int argc, char **argv)
{
    CHECK(argc == 2);
    char report[512];
    snprintf(report, sizeof report, "%s/report.json", cgtest_tmpdir());
    const char *json = run_unaffected(argv, report, NULL);
    CHECK(json != NULL);
    CHECKF(strstr(json, "\"quirks\": []") != NULL, "no quirk matched: %.3000s", json);
    long peak = site_field(json, "zeModuleCreate", "peak_inside");
    CHECKF(peak >= 2 && peak <= 16, "peak_inside %ld: %.3000s", peak, json);
    CHECK(site_field(json, "zeModuleCreate", "peak_waiting") == 0);
    CHECK(site_field(json, "zeInit", "peak_inside") == 1);
    CHECKF(strstr(json, "\"name\": \"zeContextCreate\"") &&
               strstr(strstr(json, "\"name\": \"zeContextCreate\""), "\"peak_inside\": null, \"peak_waiting\": null, "
                                                                     "\"peak_kind\": \"not_measured\""),
           "a cheap entry point is not measured: %.3000s", json);
    const char *advice = strstr(json, "\"advice\": [");
    CHECKF(advice != NULL, "no advice: %.3000s", json);
    char item[256];
    snprintf(item, sizeof item,
             "{\"entry_point\": \"zeModuleCreate\", \"api\": \"ze\", \"peak_inside\": %ld, "
             "\"peak_waiting\": 0, \"quirk\": \"igc-2.38-zeModuleCreate\"",
             peak);
    CHECKF(strstr(advice, item) != NULL, "advice: %s", advice);
    CHECK(strstr(advice, "\"versions\": \"39122.11 .. 39122.11\", \"library\": \"libigc.so.2 2.38 .. 2.38\"") != NULL);
    /* The ze driver was checked for the quirk and is another: it does not affect this run. */
    CHECK(strstr(advice, "\"source\": \"https://github.com/intel/intel-xpu-backend-for-triton/issues/7581\", "
                         "\"applied\": false, \"affects_this_run\": false, \"fix\": \"--serialize "
                         "zeModuleCreate=igc\", \"advice\": null}") != NULL);
    CHECKF(!strstr(advice, "\"entry_point\": \"zeInit\""), "advice: %s", advice);
    return 0;
}

/* argv: CALLGUARD PROG. The same compiles serialized: one thread inside at
 * a time, the others counted waiting, and no advice (it is fixed). */
static int ze_peaks_serialized_one_inside_others_waiting(int argc, char **argv)
{
    CHECK(argc == 2);
    char report[512];
    snprintf(report, sizeof report, "%s/report.json", cgtest_tmpdir());
    const char *json = run_unaffected(argv, report, "zeModuleCreate");
    CHECK(json != NULL);
    CHECKF(site_field(json, "zeModuleCreate", "peak_inside") == 1, "%.3000s", json);
    CHECKF(site_field(json, "zeModuleCreate", "peak_waiting") >= 1, "%.3000s", json);
    CHECKF(strstr(json, "\"advice\": []") != NULL, "%.3000s", json);
    return 0;
}

/* argv: CALLGUARD PROG. Two saved reports merged by `callguard report`:
 * the combined table keeps each peak's maximum over the processes (every
 * column: --all), and the advice of the unserialized one: a bug of other
 * drivers (the simulator is not IGC 2.38) in one line that names the
 * command showing it in full, --advice, which says it does not affect
 * this run. */
static int ze_peaks_merged_reports_keep_the_maximum(int argc, char **argv)
{
    CHECK(argc == 2);
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a.json", cgtest_tmpdir());
    snprintf(b, sizeof b, "%s/b.json", cgtest_tmpdir());
    const char *json = run_unaffected(argv, a, NULL);
    CHECK(json != NULL);
    long inside = site_field(json, "zeModuleCreate", "peak_inside");
    json = run_unaffected(argv, b, "zeModuleCreate");
    CHECK(json != NULL);
    long waiting = site_field(json, "zeModuleCreate", "peak_waiting");
    CHECK(inside >= 2 && waiting >= 1);
    cgtest_result r;
    const char *args[] = {argv[0], "report", "--all", a, b, NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    show(&r);
    char row[128];
    snprintf(row, sizeof row, " %ld/%ld  transition=always blocking", inside, waiting);
    const char *all = strstr(r.out, "callguard: all 2 processes");
    CHECKF(all && strstr(all, "zeModuleCreate") && strstr(strstr(all, "zeModuleCreate"), row), "want '%s' in: %s", row,
           r.out);
    const char *plain[] = {argv[0], "report", a, b, NULL};
    CHECK(cgtest_run(&r, NULL, plain) == 0);
    show(&r);
    snprintf(row, sizeof row, " %ld inside, %ld waiting at once", inside, waiting);
    all = strstr(r.out, "callguard: all 2 processes");
    CHECKF(all && strstr(all, "zeModuleCreate") && strstr(strstr(all, "zeModuleCreate"), row), "want '%s' in: %s", row,
           r.out);
    char command[1200];
    snprintf(command, sizeof command, "\n  callguard report --advice %s %s\n", a, b);
    CHECKF(!strstr(r.out, "callguard: advice:") && strstr(r.out, " known driver bugs would break this call pattern") &&
               strstr(r.out, command),
           "other drivers' bugs in one line, and the command: %s", r.out);
    const char *wide[] = {"COLUMNS=1000", NULL};
    const char *advice[] = {argv[0], "report", "--advice", a, b, NULL};
    CHECK(cgtest_run(&r, wide, advice) == 0);
    show(&r);
    CHECKF(strstr(r.out, "callguard: advice: zeModuleCreate had ") &&
               strstr(r.out, "known bug igc-2.38-zeModuleCreate breaks on ze drivers of vendor 0x8086 versions "
                             "39122.11 .. 39122.11") &&
               strstr(r.out, "  this run: not affected: its ze drivers were checked and none matched\n") &&
               strstr(r.out, "  fix: callguard run --serialize zeModuleCreate=igc,"),
           "%s", r.out);
    return 0;
}

/* argv: PROG LAYER. Without the CLI: CALLGUARD_QUIRKS names the file in a
 * program the layer is preloaded into; --quirks off's variable turns the
 * shipped quirk off on an affected driver. */
static int ze_quirks_variable_in_a_preloaded_program(int argc, char **argv)
{
    CHECK(argc == 2);
    const char *file = write_quirks("env.ini", "[quirk:sim-compiler]\n"
                                               "api       = ze\n"
                                               "vendor    = 0x1de5\n"
                                               "versions  = 0 .. 99\n"
                                               "serialize = zeModuleCreate\n"
                                               "domain    = simc\n"
                                               "source    = https://example.org/sim-compiler\n"
                                               "why       = the simulator's compiler is not reentrant\n");
    char var[600];
    snprintf(var, sizeof var, "CALLGUARD_QUIRKS=%s", file);
    cgtest_result r;
    const char *args[] = {argv[0], NULL};
    const char *env[] = {preload(argv[1]), var, NULL};
    CHECK(cgtest_run(&r, env, args) == 0);
    if (created_all(&r)) return 1;
    const char *shipped[] = {preload(argv[1]), NEO_IGC_2_38, NULL};
    CHECK(cgtest_run(&r, shipped, args) == 0);
    if (created_all(&r)) return 1;
    const char *off[] = {preload(argv[1]), NEO_IGC_2_38, "CALLGUARD_QUIRKS=off", NULL};
    CHECK(cgtest_run(&r, off, args) == 0);
    return died_of_sigabrt(&r);
}

/* argv: CALLGUARD PROG. A bad quirks file stops the run before the
 * program starts: exit 2, the file and line named. */
static int ze_quirks_bad_file_stops_the_run(int argc, char **argv)
{
    CHECK(argc == 2);
    const char *file = write_quirks("bad.ini", "[quirk:x]\n"
                                               "api = ze\n"
                                               "versions = 2 .. 1\n");
    cgtest_result r;
    const char *args[] = {argv[0], "run", "--api", "ze", "--quirks", file, "--", argv[1], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    show(&r);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2, "expected exit 2, wait status 0x%x", r.status);
    char where[600];
    snprintf(where, sizeof where, "%s:3: versions = 2 .. 1: expected LOW .. HIGH", file);
    CHECKF(strstr(r.err, where) != NULL, "the message names %s", where);
    CHECK(strstr(r.out, "created") == NULL);
    return 0;
}

/* argv: PROG_DLOPEN: a program that dlopens libze_loader.so.1 by soname
 * and calls through dlsym's pointers aborts on its own... */
static int ze_compile_race_dlopen_aborts_without_callguard(int argc, char **argv)
{
    CHECK(argc == 1);
    cgtest_result r;
    const char *args[] = {argv[0], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    return died_of_sigabrt(&r);
}

/* argv: CALLGUARD PROG_DLOPEN: ...and is serialized by `callguard run`
 * through its libze_loader.so.1 shim. */
static int ze_compile_race_dlopen_callguard_run_shim_creates_all(int argc, char **argv)
{
    CHECK(argc == 2);
    cgtest_result r;
    const char *args[] = {argv[0], "run", "--serialize", "zeModuleCreate", "--", argv[1], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    return created_all(&r);
}

/* argv: CALLGUARD PROG ZE_LAYER CL_LAYER (the layers are unused: the CLI
 * finds its own). One lock for both APIs through the command line. */
static int ze_cl_compiles_callguard_run_one_domain_never_overlap(int argc, char **argv)
{
    CHECK(argc == 4);
    cgtest_result r;
    const char *args[] = {argv[0], "run", "--serialize", "zeModuleCreate=igc,clBuildProgram=igc", "--", argv[1], NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    show(&r);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "expected exit 0, wait status 0x%x", r.status);
    int ze, cl, max, cross;
    CHECK(sscanf(r.out, "ze=%d cl=%d max_inside=%d cross=%d", &ze, &cl, &max, &cross) == 4);
    CHECK(ze == 8 && cl == 8);
    CHECKF(max == 1 && cross == 0, "max_inside=%d cross=%d", max, cross);
    return 0;
}

/* The counts of a row of the text table of every column (--all): " NAME calls nested errors states". */
static int table_row(const char *text, const char *name, unsigned long *calls, unsigned long *errors,
                     unsigned long *states)
{
    char key[128];
    snprintf(key, sizeof key, " %s ", name);
    const char *table = strstr(text, "entry point"), *row = table ? strstr(table, key) : NULL;
    unsigned long nested;
    char fmt[160];
    snprintf(fmt, sizeof fmt, " %s %%lu %%lu %%lu %%lu", name);
    return row && sscanf(row, fmt, calls, &nested, errors, states) == 4;
}

/* argv: CALLGUARD PROG: 1,000,000 polls of an event nobody signals. Each
 * ZE_RESULT_NOT_READY is a state ([api] states in apis/ze.ini): the report
 * says 0 errors for zeEventQueryStatus and names the code; the one real
 * failure is an error, by name; JSON and `callguard report` say the same. */
static int ze_event_poll_callguard_run_not_ready_is_a_state(int argc, char **argv)
{
    CHECK(argc == 2);
    char json[4096];
    snprintf(json, sizeof json, "%s/poll.json", cgtest_tmpdir());
    cgtest_result r;
    const char *args[] = {argv[0], "run", "--api", "ze", "--report", json, "--", argv[1], "1000000", NULL};
    CHECK(cgtest_run(&r, NULL, args) == 0);
    show(&r);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "expected exit 0, wait status 0x%x", r.status);
    CHECK(strstr(r.out, "not_ready=1000000 wait=0x1 beyond=0x78000004") != NULL);
    const char *conv[] = {argv[0], "report", "--all", json, NULL}; /* every column: nested, errors, states */
    cgtest_result t;
    CHECK(cgtest_run(&t, NULL, conv) == 0);
    show(&t);
    CHECKF(WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0, "callguard report: wait status 0x%x", t.status);
    unsigned long calls = 0, errors = 1, states = 0;
    CHECKF(table_row(t.out, "zeEventQueryStatus", &calls, &errors, &states), "a zeEventQueryStatus row");
    CHECKF(calls == 1000001 && errors == 0 && states == 1000000,
           "zeEventQueryStatus: %lu calls, %lu errors, %lu states", calls, errors, states);
    CHECK(strstr(t.out, "results: ZE_RESULT_NOT_READY 1000000 (a state)\n") != NULL);
    CHECKF(table_row(t.out, "zeEventHostSynchronize", &calls, &errors, &states) && calls == 1 && errors == 0 &&
               states == 1,
           "a wait that timed out is a state: %lu calls, %lu errors, %lu states", calls, errors, states);
    CHECKF(table_row(t.out, "zeEventCreate", &calls, &errors, &states) && calls == 2 && errors == 1 && states == 0,
           "a real failure is an error: %lu calls, %lu errors, %lu states", calls, errors, states);
    CHECK(strstr(t.out, "results: ZE_RESULT_ERROR_INVALID_ARGUMENT 1\n") != NULL);
    CHECK(strstr(t.out, "(0 nested, 1 failed, 1000001 returned a state such as NOT_READY)") != NULL);
    /* The JSON names each code, its value and what it is. */
    FILE *f = fopen(json, "r");
    CHECK(f != NULL);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    CHECK(strstr(text, "{\"name\": \"ZE_RESULT_NOT_READY\", \"code\": 1, \"calls\": 1000000, \"kind\": \"state\"}"));
    CHECK(strstr(text, "{\"name\": \"ZE_RESULT_ERROR_INVALID_ARGUMENT\", \"code\": 2013265924, \"calls\": 1, "
                       "\"kind\": \"error\"}"));
    return 0;
}

/* argv: CALLGUARD PROG: a policy file that declares states for single entry
 * points: zeEventQueryStatus gets none (its NOT_READY are errors again),
 * zeEventCreate gets ZE_RESULT_ERROR_INVALID_ARGUMENT; zeEventHostSynchronize
 * keeps the layer's [api] list. */
static int ze_event_poll_policy_file_states_for_one_entry_point(int argc, char **argv)
{
    CHECK(argc == 2);
    char policy[4096], env[4200];
    snprintf(policy, sizeof policy, "%s/states.ini", cgtest_tmpdir());
    FILE *f = fopen(policy, "w");
    CHECK(f != NULL);
    fputs("[api]\nname = ze\nheader = level_zero/ze_api.h\nprefix = ze, zet, zes\nlibrary = libze_loader.so.1\n\n"
          "[zeEventQueryStatus]\nstates = none\n\n[zeEventCreate]\nstates = ZE_RESULT_ERROR_INVALID_ARGUMENT\n",
          f);
    fclose(f);
    snprintf(env, sizeof env, "CALLGUARD_POLICY=%s", policy);
    const char *envs[] = {env, NULL};
    cgtest_result r;
    const char *args[] = {argv[0], "run", "--api", "ze", "--report", "-", "--all", "--", argv[1], "1000", NULL};
    CHECK(cgtest_run(&r, envs, args) == 0);
    show(&r);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "expected exit 0, wait status 0x%x", r.status);
    unsigned long calls = 0, errors = 0, states = 0;
    CHECKF(table_row(r.err, "zeEventQueryStatus", &calls, &errors, &states) && calls == 1001 && errors == 1000 &&
               states == 0,
           "zeEventQueryStatus with states = none: %lu calls, %lu errors, %lu states", calls, errors, states);
    CHECK(strstr(r.err, "results: ZE_RESULT_NOT_READY 1000\n") != NULL);
    CHECKF(table_row(r.err, "zeEventCreate", &calls, &errors, &states) && calls == 2 && errors == 0 && states == 1,
           "zeEventCreate's declared state: %lu calls, %lu errors, %lu states", calls, errors, states);
    CHECK(strstr(r.err, "results: ZE_RESULT_ERROR_INVALID_ARGUMENT 1 (a state)\n") != NULL);
    CHECKF(table_row(r.err, "zeEventHostSynchronize", &calls, &errors, &states) && errors == 0 && states == 1,
           "zeEventHostSynchronize keeps the layer's states: %lu errors, %lu states", errors, states);
    /* A code the layer does not have: refused before the program starts, with the file and line. */
    f = fopen(policy, "w");
    CHECK(f != NULL);
    fputs("[api]\nname = ze\nheader = level_zero/ze_api.h\nprefix = ze\nlibrary = libze_loader.so.1\n\n"
          "[zeEventQueryStatus]\nstates = ZE_RESULT_NOT_READ\n",
          f);
    fclose(f);
    CHECK(cgtest_run(&r, envs, args) == 0);
    show(&r);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2, "expected exit 2, wait status 0x%x", r.status);
    CHECK(strstr(r.err, "states.ini:8: [zeEventQueryStatus]: states: ZE_RESULT_NOT_READ is not a result code of the "
                        "ze layer") != NULL);
    CHECK(strstr(r.out, "not_ready=") == NULL);
    return 0;
}

/* argv: CALLGUARD PROG: the compile race aborts in a grandchild that its own
 * parent (a shell) reaps, so callguard never sees how it ended. With
 * --signals record the process noted SIGABRT itself: the report says it died
 * of SIGABRT with the threads inside zeModuleCreate; without, that how it
 * ended is not known. The shell sees the abort either way. */
static int ze_compile_race_grandchild_signals_record_names_sigabrt(int argc, char **argv)
{
    CHECK(argc == 2);
    for (int hook = 1; hook >= 0; hook--) {
        cgtest_result r;
        const char *with[] = {argv[0],    "run", "--api", "ze",      "--signals", "record",
                              "--report", "-",   "--",    "/bin/sh", "-c",        "\"$0\"; echo \"shell saw $?\"",
                              argv[1],    NULL};
        const char *without[] = {argv[0], "run", "--api",   "ze", "--report",
                                 "-",     "--",  "/bin/sh", "-c", "\"$0\"; echo \"shell saw $?\"",
                                 argv[1], NULL};
        CHECK(cgtest_run(&r, NULL, hook ? with : without) == 0);
        show(&r);
        CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "the shell exits 0: wait status 0x%x", r.status);
        CHECK(strstr(r.out, "shell saw 134") != NULL);
        const char *want = hook ? "  died of SIGABRT with " : "  ended without exit handlers with ";
        const char *line = strstr(r.err, want);
        CHECKF(line != NULL, "the report says: %s", want);
        int n = 0;
        CHECKF(sscanf(line + strlen(want), "%d threads inside zeModuleCreate", &n) == 1 && n >= 2,
               "the calls in flight are named");
        CHECKF(hook || strstr(line, "zeModuleCreate\n    (how is not known: "), "and why not how: %s", line);
    }
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"ze_compile_race_grandchild_signals_record_names_sigabrt",
     ze_compile_race_grandchild_signals_record_names_sigabrt},
    {"ze_event_poll_callguard_run_not_ready_is_a_state", ze_event_poll_callguard_run_not_ready_is_a_state},
    {"ze_event_poll_policy_file_states_for_one_entry_point", ze_event_poll_policy_file_states_for_one_entry_point},
    {"ze_compile_race_callguard_run_serialized_creates_all", ze_compile_race_callguard_run_serialized_creates_all},
    {"ze_compile_race_callguard_run_unserialized_aborts", ze_compile_race_callguard_run_unserialized_aborts},
    {"ze_quirk_fixes_the_compile_race_on_an_affected_driver", ze_quirk_fixes_the_compile_race_on_an_affected_driver},
    {"ze_quirk_stays_off_on_an_unaffected_driver", ze_quirk_stays_off_on_an_unaffected_driver},
    {"ze_quirks_off_leaves_the_affected_driver_racing", ze_quirks_off_leaves_the_affected_driver_racing},
    {"ze_quirks_user_file_applies_its_own_quirk", ze_quirks_user_file_applies_its_own_quirk},
    {"ze_quirks_bad_file_stops_the_run", ze_quirks_bad_file_stops_the_run},
    {"ze_peaks_unaffected_driver_advises_the_igc_fix", ze_peaks_unaffected_driver_advises_the_igc_fix},
    {"ze_peaks_serialized_one_inside_others_waiting", ze_peaks_serialized_one_inside_others_waiting},
    {"ze_peaks_merged_reports_keep_the_maximum", ze_peaks_merged_reports_keep_the_maximum},
    {"ze_quirks_variable_in_a_preloaded_program", ze_quirks_variable_in_a_preloaded_program},
    {"ze_compile_race_callguard_run_report_names_calls_in_flight",
     ze_compile_race_callguard_run_report_names_calls_in_flight},
    {"ze_compile_race_dlopen_aborts_without_callguard", ze_compile_race_dlopen_aborts_without_callguard},
    {"ze_compile_race_dlopen_callguard_run_shim_creates_all", ze_compile_race_dlopen_callguard_run_shim_creates_all},
    {"ze_cl_compiles_callguard_run_one_domain_never_overlap", ze_cl_compiles_callguard_run_one_domain_never_overlap},
    {"ze_passthrough_preloaded_same_as_loader", ze_passthrough_preloaded_same_as_loader},
    {"ze_passthrough_linked_same_as_loader", ze_passthrough_linked_same_as_loader},
    {"ze_cl_compiles_in_one_domain_never_overlap", ze_cl_compiles_in_one_domain_never_overlap},
    {"ze_cl_compiles_unserialized_overlap", ze_cl_compiles_unserialized_overlap},
    {"ze_compile_race_aborts_without_callguard", ze_compile_race_aborts_without_callguard},
    {"ze_compile_race_preloaded_serialized_creates_all", ze_compile_race_preloaded_serialized_creates_all},
    {"ze_compile_race_linked_without_policy_aborts", ze_compile_race_linked_without_policy_aborts},
    {"ze_compile_race_linked_c_api_serialize_creates_all", ze_compile_race_linked_c_api_serialize_creates_all},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
