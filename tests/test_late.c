/* Behaviour tests of settings made before their layer is loaded. This
 * runner is not linked to any layer: each test dlopens the toy layer when
 * it wants it, as a program (or Python) dlopens a driver long after
 * start-up. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <dlfcn.h>
#include <sys/wait.h>

static int load_toy(void)
{
    if (dlopen(CG_TOY_LAYER, RTLD_NOW | RTLD_LOCAL)) return 1;
    fprintf(stderr, "dlopen %s: %s\n", CG_TOY_LAYER, dlerror());
    return 0;
}

static cg_site_info sites[64];

static const cg_site_info *site(const char *name)
{
    long n = cg_list_sites("toy", sites, 64);
    for (long i = 0; i < n && i < 64; i++)
        if (strcmp(sites[i].name, name) == 0) return &sites[i];
    return NULL;
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- kept, then applied ------------------------------------------------------- */

static int child_settings_before_load(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_list_layers(NULL, 0) == 0);
    CHECK(cg_configure("CALLGUARD_SERIALIZE", "toyCompile=igc") == CG_PENDING);
    CHECKF(strstr(cg_last_error(), "toyCompile"), "%s", cg_last_error());
    CHECK(cg_serialize("toyAdd", "adds", CG_SCOPE_PROCESS) == CG_PENDING);
    CHECKF(strstr(cg_last_error(), "toyAdd") && strstr(cg_last_error(), "kept"), "%s", cg_last_error());
    CHECK(cg_set_transition("toyWait", CG_TRANSITION_NEVER) == CG_PENDING);
    CHECK(cg_set_blocking("toyNop", 1, "kept until the layer loads") == CG_PENDING);
    CHECK(strcmp(cg_status_name(CG_PENDING), "CG_PENDING") == 0);

    CHECK(load_toy());
    CHECK(cg_list_layers(NULL, 0) == 1);
    const cg_site_info *s;
    CHECK((s = site("toyCompile")) && strcmp(s->domain, "igc") == 0);
    CHECK((s = site("toyAdd")) && strcmp(s->domain, "adds") == 0);
    CHECK((s = site("toyWait")) && s->transition == CG_TRANSITION_NEVER);
    CHECK((s = site("toyNop")) && s->blocking && strcmp(s->reason, "kept until the layer loads") == 0);
    /* From the environment, read before any layer existed. */
    CHECK((s = site("toyGetDevice")) && strcmp(s->domain, "dev") == 0);
    /* Now the layer is loaded: applied at once. */
    CHECK(cg_serialize("toyAdd", "adds2", CG_SCOPE_PROCESS) == CG_OK);
    CHECK((s = site("toyAdd")) && strcmp(s->domain, "adds2") == 0);
    return 0;
}

static int test_settings_before_their_layer_are_kept_and_applied(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    const char *env[] = {"CALLGUARD_SERIALIZE=toyGetDevice=dev", NULL};
    CHECK(cgtest_child(&r, env, "child_settings_before_load", NULL) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status 0x%x: %s", r.status, r.err);
    CHECKF(r.err[0] == '\0', "every setting was applied: nothing on stderr, got '%s'", r.err);
    return 0;
}

/* ---- kept, and wrong when the layer loads --------------------------------------- */

static int child_wrong_names_before_load(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_serialize("toyNope", "d", CG_SCOPE_PROCESS) == CG_PENDING);
    CHECK(cg_serialize("ToyCompile", "d", CG_SCOPE_PROCESS) == CG_PENDING);
    CHECK(load_toy());
    const cg_site_info *s;
    CHECK((s = site("toyCompile")) && s->domain[0] == '\0'); /* not applied under another spelling */
    /* With the layer loaded, the same names are errors at once. */
    CHECK(cg_serialize("toyNope", "d", CG_SCOPE_PROCESS) == CG_ENOENT);
    CHECKF(strstr(cg_last_error(), "toyNope") && strstr(cg_last_error(), "toy layer"), "%s", cg_last_error());
    CHECK(cg_serialize("ToyAdd", "d", CG_SCOPE_PROCESS) == CG_ENOENT);
    CHECKF(strstr(cg_last_error(), "did you mean 'toyAdd'"), "%s", cg_last_error());
    return 0;
}

static int test_kept_name_its_layer_lacks_is_reported_when_it_loads(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    CHECK(cgtest_child(&r, NULL, "child_wrong_names_before_load", NULL) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status 0x%x: %s", r.status, r.err);
    CHECKF(lines(r.err) == 2 && strstr(r.err, "unknown entry point 'toyNope'") &&
               strstr(r.err, "did you mean 'toyCompile'") && !strstr(r.err, "never applied"),
           "one line for each, dropped (not named again at exit): '%s'", r.err);
    return 0;
}

static int child_load_toy(int argc, char **argv)
{
    (void)argc, (void)argv;
    printf("before load\n");
    fflush(stdout);
    if (!load_toy()) return 3;
    printf("loaded\n");
    return 0;
}

static int test_kept_name_from_environment_exits_2_when_its_layer_loads(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    const char *env[] = {"CALLGUARD_SERIALIZE=toyCompil", NULL};
    CHECK(cgtest_child(&r, env, "child_load_toy", NULL) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2 && strstr(r.out, "before load") &&
               !strstr(r.out, "loaded") && strstr(r.err, "unknown entry point 'toyCompil'") && lines(r.err) == 1,
           "status 0x%x out '%s' err '%s'", r.status, r.out, r.err);
    const char *case_env[] = {"CALLGUARD_SERIALIZE=ToyCompile", NULL};
    CHECK(cgtest_child(&r, case_env, "child_load_toy", NULL) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2 && strstr(r.err, "did you mean 'toyCompile'"),
           "status 0x%x err '%s'", r.status, r.err);
    return 0;
}

/* ---- never applied ------------------------------------------------------------- */

static int child_settings_no_layer_has(int argc, char **argv)
{
    (void)argc, (void)argv;
    CHECK(cg_serialize("fooBar", "d", CG_SCOPE_PROCESS) == CG_PENDING);
    CHECK(cg_set_blocking("barBaz", 0, NULL) == CG_PENDING);
    CHECK(load_toy()); /* a layer, but not theirs */
    return 0;
}

static int test_settings_no_layer_had_are_named_at_exit(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    const char *env[] = {"CALLGUARD_SERIALIZE=quxQuux", NULL};
    CHECK(cgtest_child(&r, env, "child_settings_no_layer_has", NULL) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "status 0x%x: %s", r.status, r.err);
    CHECKF(lines(r.err) == 1 && strstr(r.err, "never applied") && strstr(r.err, "fooBar (cg_serialize)") &&
               strstr(r.err, "barBaz (cg_set_blocking)") && strstr(r.err, "quxQuux (CALLGUARD_SERIALIZE)"),
           "one line naming each: '%s'", r.err);
    return 0;
}

/* ---- a policy file's [defaults] ------------------------------------------------ */

static const char *write_file(const char *name, const char *text)
{
    static char path[4][512];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", cgtest_tmpdir(), name);
    FILE *f = fopen(p, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) return NULL;
    return p;
}

/* [defaults] in a file with an [api] section sets that layer's sites only;
 * a file without [api] sets every layer's. */
static int test_policy_defaults_apply_to_the_files_own_api(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *cl = write_file("cl.ini", "[api]\nname = cl\nheader = CL/cl.h\nprefix = cl\nlibrary = libOpenCL.so.1\n"
                                          "[defaults]\ntransition = never\n");
    const char *toy = write_file("toy.ini", "[api]\nname = toy\nheader = toy.h\nprefix = toy\nlibrary = libcgtoy.so\n"
                                            "[defaults]\ntransition = blocking\n");
    const char *any = write_file("any.ini", "[defaults]\ntransition = never\n");
    CHECK(cl && toy && any);
    CHECKF(cg_policy_load(cl) == CG_OK, "%s", cg_last_error());
    CHECK(load_toy());
    const cg_site_info *s;
    CHECKF((s = site("toyAdd")) && s->transition == CG_TRANSITION_ALWAYS, "the cl file's defaults left toy's alone: %d",
           s ? (int)s->transition : -1);
    CHECKF(cg_policy_load(toy) == CG_OK, "%s", cg_last_error());
    CHECK((s = site("toyAdd")) && s->transition == CG_TRANSITION_BLOCKING);
    /* A later cl file's defaults do not undo the toy file's. */
    CHECKF(cg_policy_load(cl) == CG_OK, "%s", cg_last_error());
    CHECK((s = site("toyAdd")) && s->transition == CG_TRANSITION_BLOCKING);
    CHECKF(cg_policy_load(any) == CG_OK, "%s", cg_last_error());
    CHECK((s = site("toyAdd")) && s->transition == CG_TRANSITION_NEVER);
    return 0;
}

/* ---- the program's own look-ups -------------------------------------------------- */

/* A layer loaded long after start-up (dlopen, RTLD_GLOBAL), its library
 * not loaded: a global look-up of one of its names answers NULL with
 * dlerror() set, as without the layer; once the library is loaded, the
 * layer's wrapper. libcallguard comes before libc in this runner's lookup
 * order, so its dlsym is the runner's (dlsym_interpose.c): it learns the
 * layer's prefix, and the new objects, after start-up. */
static int test_a_layer_loaded_late_hides_its_names_until_its_library_loads(int argc, char **argv)
{
    (void)argc, (void)argv;
    void *layer = dlopen(CG_TOY_LAYER_UNLINKED, RTLD_NOW | RTLD_GLOBAL);
    CHECKF(layer, "%s", dlerror());
    void *self = dlopen(NULL, RTLD_LAZY);
    dlerror();
    CHECK(dlsym(RTLD_DEFAULT, "toyAdd") == NULL && dlerror() != NULL);
    CHECK(dlsym(self, "toyCompile") == NULL && dlerror() != NULL);
    void *lib = dlopen(CG_TOY_LIB, RTLD_NOW | RTLD_GLOBAL);
    CHECKF(lib, "%s", dlerror());
    void *wrapper = dlsym(layer, "toyAdd");
    CHECK(wrapper && dlsym(RTLD_DEFAULT, "toyAdd") == wrapper && dlsym(self, "toyAdd") == wrapper);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"child_settings_before_load", child_settings_before_load},
    {"child_wrong_names_before_load", child_wrong_names_before_load},
    {"child_load_toy", child_load_toy},
    {"child_settings_no_layer_has", child_settings_no_layer_has},
    {"settings_before_their_layer_are_kept_and_applied", test_settings_before_their_layer_are_kept_and_applied},
    {"kept_name_its_layer_lacks_is_reported_when_it_loads", test_kept_name_its_layer_lacks_is_reported_when_it_loads},
    {"kept_name_from_environment_exits_2_when_its_layer_loads",
     test_kept_name_from_environment_exits_2_when_its_layer_loads},
    {"settings_no_layer_had_are_named_at_exit", test_settings_no_layer_had_are_named_at_exit},
    {"policy_defaults_apply_to_the_files_own_api", test_policy_defaults_apply_to_the_files_own_api},
    {"a_layer_loaded_late_hides_its_names_until_its_library_loads",
     test_a_layer_loaded_late_hides_its_names_until_its_library_loads},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
