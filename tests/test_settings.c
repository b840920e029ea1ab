/* Settings, quirks files and names the runtime refuses, each with a message
 * naming the value and what is accepted, before the program's first call
 * reaches the driver; and what the loaded layers say about themselves.
 * Through the generated toy layer, as tests/test_serialize.c. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <toy.h>
#include <unistd.h>

static int child_first_call(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("main reached\n");
    fflush(stdout);
    return toyNop(0);
}

static int expect_refused(const char *var, const char *value, const char *must_say)
{
    char env0[1024];
    snprintf(env0, sizeof env0, "%s=%s", var, value);
    const char *env[] = {env0, NULL};
    cgtest_result r;
    if (cgtest_child(&r, env, "child_first_call", NULL) != 0) return 1;
    int ok = WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2 && !strstr(r.out, "main reached") &&
             strstr(r.err, must_say) && strchr(r.err, '\n') == r.err + strlen(r.err) - 1;
    if (!ok)
        fprintf(stderr, "%s=%s: status 0x%x, stdout '%s', stderr '%s' (want '%s')\n", var, value, r.status, r.out,
                r.err, must_say);
    return !ok;
}

static int test_bad_settings_exit_2_before_first_call(int argc, char **argv)
{
    (void)argc, (void)argv;
    int bad = 0;
    bad += expect_refused("CALLGUARD_TRANSITION", "sometimes", "expected always, blocking or never");
    bad += expect_refused("CALLGUARD_SERIALIZE", "toyCompil", "unknown entry point 'toyCompil'");
    bad += expect_refused("CALLGUARD_SERIALIZE", "toyCompile:global", "expected process, handle, once or shared");
    bad += expect_refused("CALLGUARD_SERIALIZE", "", "expected FN[=DOMAIN]");
    bad += expect_refused("CALLGUARD_STALL_MS", "abc", "CALLGUARD_STALL_MS=abc");
    bad += expect_refused("CALLGUARD_STALL_MS", "0", "from 1 to 3600000");
    bad += expect_refused("CALLGUARD_RUNTIME", "java", "expected auto, release, none, cpython or julia");
    bad += expect_refused("CALLGUARD_SERIALISE", "toyCompile", "CALLGUARD_SERIALISE");
    bad += expect_refused("CALLGUARD_TOY_LIBRARY", "libcgtoy.so", "absolute path");
    bad += expect_refused("CALLGUARD_POLICY", "/nonexistent/policy.ini", "cannot read policy file");
    bad += expect_refused("CALLGUARD_POLICY", cgtest_write_file("k.ini", "[toyCompile]\nserialise = igc\n"),
                          "k.ini:2: unknown key serialise in [toyCompile]");
    bad += expect_refused("CALLGUARD_POLICY",
                          cgtest_write_file("d.ini", "[toyWait]\nblocking = yes\nreason = a\nreason = b\n"),
                          "d.ini:4: duplicate key reason in [toyWait] (first set at line 3)");
    bad += expect_refused("CALLGUARD_POLICY", cgtest_write_file("r.ini", "[toyNop]\nblocking = yes\n"),
                          "r.ini:1: [toyNop] has blocking = yes without reason");
    bad += expect_refused("CALLGUARD_POLICY", cgtest_write_file("v.ini", "[defaults]\ntransition = often\n"),
                          "v.ini:2: transition = often: expected always, blocking or never");
    bad += expect_refused(
        "CALLGUARD_POLICY",
        cgtest_write_file("s.ini", "[toyNop]\nserialize = a\n[toyAdd]\nserialize = a\n[toyNop]\ntransition = never\n"),
        "s.ini:5: duplicate section [toyNop] (first at line 1)");
    bad += expect_refused("CALLGUARD_POLICY", cgtest_write_file("u.ini", "[toyNope]\nserialize = a\n"),
                          "unknown entry point 'toyNope'");
    bad += expect_refused("CALLGUARD_POLICY", cgtest_write_file("x.ini", "just text\n"), "x.ini:1:");
    return bad != 0;
}

/* A quirks file (docs/quirks.md) is read by the policy files' reader: every
 * one of its errors names the file and line, and the process exits 2 before
 * its first guarded call. */
static int test_bad_quirks_files_exit_2_naming_file_and_line(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const char good[] = "[quirk:q]\napi = toy\nversions = 1 .. 2\nserialize = toyCompile\ndomain = d\n"
                               "source = https://example.org/q\nwhy = w\n";
    char text[600];
    int bad = 0;
    bad += expect_refused("CALLGUARD_QUIRKS", "", "expected off, or the path of a quirks file");
    bad += expect_refused("CALLGUARD_QUIRKS", "/nonexistent/quirks.ini",
                          "cannot read quirks file /nonexistent/quirks.ini");
    snprintf(text, sizeof text, "%sversoins = 1 .. 2\n", good);
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("qk.ini", text),
                          "qk.ini:8: unknown key versoins in [quirk:q]: a [quirk:NAME] section accepts api, vendor");
    snprintf(text, sizeof text, "%swhy = again\n", good);
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("qd.ini", text),
                          "qd.ini:8: duplicate key why in [quirk:q] (first set at line 7)");
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("qv.ini", "[quirk:q]\nversions = 2 .. 1\n"),
                          "qv.ini:2: versions = 2 .. 1: expected LOW .. HIGH");
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("qs.ini", "[quirk:q]\nsource = example.org\n"),
                          "qs.ini:2: source = example.org: expected the public URL");
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("qm.ini", "[quirk:q]\napi = toy\n"),
                          "qm.ini:1: [quirk:q] has no versions");
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("qp.ini", "[toyCompile]\nserialize = a\n"),
                          "qp.ini:1: [toyCompile] in a quirks file: expected only [quirk:NAME] sections");
    bad += expect_refused("CALLGUARD_POLICY", cgtest_write_file("pq.ini", good),
                          "pq.ini:1: [quirk:q] is a quirk: quirks go in a quirks file");
    snprintf(text, sizeof text, "%sscope = stripe\n", good);
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("qo.ini", text),
                          "qo.ini:8: scope = stripe: expected process, once or handle");
    snprintf(text, sizeof text, "%sscope = once\nshared = toyLaunch\n", good);
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("qso.ini", text),
                          "qso.ini:9: [quirk:q] has shared with scope = once: a domain taken shared is one lock "
                          "for the whole process");
    snprintf(text, sizeof text, "%sadvice = do this\n", good);
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("qa.ini", text),
                          "qa.ini:5: [quirk:q] gives advice and so serializes nothing: drop domain, or drop advice");
    bad +=
        expect_refused("CALLGUARD_QUIRKS",
                       cgtest_write_file("qn2.ini", "[quirk:q]\napi = toy\nversions = 1 .. 2\nserialize = toyCompile\n"
                                                    "source = https://example.org/q\nwhy = w\n"),
                       "qn2.ini:1: [quirk:q] has no domain: a quirk needs api, versions, serialize, source, why, "
                       "and domain unless it gives advice");
    snprintf(text, sizeof text, "[quirk:q]\n; %0250d\n", 0);
    bad += expect_refused("CALLGUARD_QUIRKS", cgtest_write_file("ql.ini", text), "ql.ini:2: line too long");
    const char *nul = cgtest_write_file("qn.ini", "");
    FILE *f = fopen(nul, "w");
    if (!f) abort();
    fwrite("[quirk:q]\napi = t\0oy\n", 1, 21, f);
    fclose(f);
    bad += expect_refused("CALLGUARD_QUIRKS", nul, "qn.ini:2: NUL byte in the line");
    return bad != 0;
}

static int test_bad_values_through_c_api(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_serialize("toyNope", "d", CG_SCOPE_PROCESS) == CG_ENOENT);
    CHECK(strstr(cg_last_error(), "toyNope"));
    CHECK(cg_serialize("toyNop", "bad name!", CG_SCOPE_PROCESS) == CG_EINVAL);
    CHECK(strstr(cg_last_error(), "bad name!"));
    CHECK(cg_serialize("toyNop", "p", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(cg_serialize("toyAdd", "p", CG_SCOPE_HANDLE) == CG_EINVAL); /* one scope per domain */
    CHECK(cg_configure("CALLGUARD_TRANSITION", "sometimes") == CG_EINVAL);
    CHECK(strstr(cg_last_error(), "CALLGUARD_TRANSITION=sometimes") && strstr(cg_last_error(), "expected"));
    CHECK(cg_set_transition("toyNop", (cg_transition)7) == CG_EINVAL);
    CHECK(cg_set_blocking("toyNop", 1, NULL) == CG_EINVAL);
    CHECK(cg_policy_load("/nonexistent.ini") == CG_EIO);
    CHECK(cg_policy_load(cgtest_write_file("bad.ini", "[toyNop]\nserialize = x\nscope = sideways\n")) == CG_EFORMAT);
    CHECK(strstr(cg_last_error(), "sideways"));
    /* A bad file changes nothing. */
    cg_site_stats s;
    CHECK(cg_get_stats("toyNop", &s) == CG_OK);
    CHECK(cg_policy_load(cgtest_write_file("good.ini", "[toyNop]\nserialize = y\n")) == CG_OK);
    CHECK(strcmp(cg_result_name("toy", TOY_ERROR_BUILD_FAILED), "TOY_ERROR_BUILD_FAILED") == 0);
    CHECK(cg_result_name("toy", 12345) == NULL);
    return 0;
}

static int test_library_variable_accepted_for_any_api(int argc, char **argv)
{
    (void)argc, (void)argv;
    /* A layer for an API callguard does not ship reads CALLGUARD_MY_LIBRARY;
     * it may be dlopened long after start-up, so the variable is accepted. */
    cgtest_result r;
    const char *env[] = {"CALLGUARD_MY_LIBRARY=/bin/sh", NULL};
    CHECK(cgtest_child(&r, env, "child_first_call", NULL) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0 && strstr(r.out, "main reached") && !r.err[0],
           "status 0x%x, stderr '%s'", r.status, r.err);
    int bad = 0;
    bad += expect_refused("CALLGUARD_MY_LIBRARY", "libmy.so", "absolute path");
    bad += expect_refused("CALLGUARD_MY_LIBRARY", "/nonexistent/libmy.so", "/nonexistent/libmy.so");
    bad += expect_refused("CALLGUARD_my_LIBRARY", "/bin/sh", "CALLGUARD_my_LIBRARY=/bin/sh: unknown setting");
    CHECK(bad == 0);
    CHECK(cg_configure("CALLGUARD_MY_LIBRARY", "/bin/sh") == CG_OK);
    CHECK(cg_configure("CALLGUARD_MY_LIBRARY", "relative.so") == CG_EINVAL);
    return 0;
}

static int test_loaded_layers_describe_themselves(int argc, char **argv)
{
    (void)argc, (void)argv;
    cg_layer_info l[4];
    CHECK(cg_list_layers(NULL, 0) == 1);
    CHECK(cg_list_layers(l, 4) == 1);
    CHECK(strcmp(l[0].api, "toy") == 0 && strcmp(l[0].prefixes, "toy") == 0);
    CHECK(strcmp(l[0].soname, "libcgtoy.so") == 0 && strcmp(l[0].library_env, "CALLGUARD_TOY_LIBRARY") == 0);
    CHECK(l[0].library_path && strstr(l[0].library_path, "libcgtoy.so") && strstr(l[0].header, "toy.h"));
    CHECKF(strstr(l[0].path, "/libcallguard_toy.so") && !l[0].shim && l[0].nsites == 17, "%s shim %d sites %u",
           l[0].path, l[0].shim, l[0].nsites);
    /* toy.ini sets no `search`: the system's way; an API with no layer: -1. */
    CHECK(cg_layer_search("toy") == CG_SEARCH_SYSTEM && cg_layer_search("nccl") == -1 && cg_layer_search(NULL) == -1);
    return 0;
}

static int test_names_are_checked_against_loaded_layers(int argc, char **argv)
{
    (void)argc, (void)argv;
    /* A loaded layer's prefix, a name it lacks: an error, nothing changes. */
    CHECK(cg_set_transition("toyNope", CG_TRANSITION_NEVER) == CG_ENOENT);
    CHECK(cg_set_blocking("toyNope", 0, NULL) == CG_ENOENT);
    CHECK(cg_configure("CALLGUARD_SERIALIZE", "toyCompile=c,toyNope") == CG_ENOENT);
    CHECKF(strstr(cg_last_error(), "toyNope"), "%s", cg_last_error());
    cg_site_info s[32];
    long n = cg_list_sites("toy", s, 32); /* how many the layer has: at most 32 filled */
    for (long i = 0; i < n && i < 32; i++)
        if (strcmp(s[i].name, "toyCompile") == 0) CHECKF(s[i].domain[0] == '\0', "%s", s[i].domain);
    CHECK(cg_policy_load(cgtest_write_file("nope.ini", "[toyNope]\nserialize = x\n")) == CG_ENOENT);
    /* Another case: an error with a hint. */
    CHECK(cg_serialize("ToyCompile", "c", CG_SCOPE_PROCESS) == CG_ENOENT);
    CHECKF(strstr(cg_last_error(), "did you mean 'toyCompile'"), "%s", cg_last_error());
    CHECK(cg_set_transition("TOYWAIT", CG_TRANSITION_NEVER) == CG_ENOENT);
    /* No loaded layer's prefix: kept for a layer that may load (tooAdd, a typo, is named at exit). */
    CHECK(cg_serialize("tooAdd", "c", CG_SCOPE_PROCESS) == CG_PENDING);
    CHECK(cg_policy_load(cgtest_write_file(
              "other.ini", "[toyAdd]\nserialize = a\n[clBuildProgram]\nserialize = igc\n")) == CG_PENDING);
    CHECKF(strstr(cg_last_error(), "clBuildProgram"), "%s", cg_last_error());
    CHECK(cg_serialize("bad name", "c", CG_SCOPE_PROCESS) == CG_EINVAL);
    return 0;
}

/* The file's text, valid until the next call. */

const cgtest_case cgtest_cases[] = {
    {"child_first_call", child_first_call},
    {"bad_settings_exit_2_before_first_call", test_bad_settings_exit_2_before_first_call},
    {"bad_quirks_files_exit_2_naming_file_and_line", test_bad_quirks_files_exit_2_naming_file_and_line},
    {"bad_values_through_c_api", test_bad_values_through_c_api},
    {"library_variable_accepted_for_any_api", test_library_variable_accepted_for_any_api},
    {"loaded_layers_describe_themselves", test_loaded_layers_describe_themselves},
    {"names_are_checked_against_loaded_layers", test_names_are_checked_against_loaded_layers},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
