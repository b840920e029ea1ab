/* Behaviour tests of what callguard-gen generates, through the toy layer:
 * suffix variants ([api] variants = _v2, _ptds in apis/toy.ini) and a
 * hand-written wrapper (wrapper = hand: src/layers/toy/cg_toy_hand.c, a
 * small model of cuGetProcAddress). Like test_serialize.c, the binary links
 * libcallguard_toy.so in place of the toy library. */
#define _GNU_SOURCE
#include "cgtest.h"

#include <callguard/callguard.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <toy.h>

static toy_device_t dev0(void)
{
    toy_device_t d = NULL;
    if (toyGetDevice(0, &d) != TOY_SUCCESS) abort();
    return d;
}

/* ---- variants share their base's policy and report row ------------------------- */

static pthread_barrier_t start;
static atomic_int failed;

/* Thread i compiles through toyCompile, toyCompile_v2 or toyCompile_v2_ptds. */
static void *compile_thread(void *arg)
{
    int i = (int)(intptr_t)arg;
    toy_program_t p = NULL;
    pthread_barrier_wait(&start);
    toy_result_t r = i % 3 == 0   ? toyCompile(dev0(), "kernel", 20000, &p)
                     : i % 3 == 1 ? toyCompile_v2(dev0(), "kernel", 20000, 0, &p)
                                  : toyCompile_v2_ptds(dev0(), "kernel", 20000, 0, &p);
    if (r != TOY_SUCCESS)
        atomic_fetch_add(&failed, 1);
    else
        toyProgramRelease(p);
    return NULL;
}

/* child: 9 threads on one device, three through each name. argv[0]: plain,
 * or the name to serialize (any of the family serializes all of it). */
static int child_variant_race(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "plain") != 0 && cg_serialize(argv[0], "igc", CG_SCOPE_PROCESS) != CG_OK) {
        fprintf(stderr, "cg_serialize: %s\n", cg_last_error());
        return 3;
    }
    cg_stats_enable(1);
    pthread_t t[9];
    pthread_barrier_init(&start, NULL, 9);
    for (int i = 0; i < 9; i++)
        pthread_create(&t[i], NULL, compile_thread, (void *)(intptr_t)i);
    for (int i = 0; i < 9; i++)
        pthread_join(t[i], NULL);
    cg_site_stats s;
    if (cg_get_stats("toyCompile", &s) != CG_OK) return 4;
    toy_stats_t st;
    toyGetStats(&st);
    printf("failed=%d row_calls=%llu compiles=%u max_inside=%u\n", atomic_load(&failed), (unsigned long long)s.calls,
           st.compiles, st.max_inside);
    return 0;
}

static int test_variants_race_like_their_base(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    const char *plain[] = {"plain", NULL};
    CHECK(cgtest_child(&r, NULL, "child_variant_race", plain) == 0);
    CHECKF(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT, "status 0x%x, stderr: %s", r.status, r.err);
    return 0;
}

static int test_variants_follow_base_serialize_and_row(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result r;
    /* The base's name, a variant's name (stacked suffixes too), and the
     * environment: each serializes the whole family; all nine calls land in
     * toyCompile's row. */
    const char *names[] = {"toyCompile", "toyCompile_v2", "toyCompile_v2_ptds"};
    for (int i = 0; i < 3; i++) {
        const char *args[] = {names[i], NULL};
        CHECK(cgtest_child(&r, NULL, "child_variant_race", args) == 0);
        CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "%s: status 0x%x, stderr: %s", names[i], r.status,
               r.err);
        CHECKF(strstr(r.out, "failed=0 row_calls=9 compiles=9 max_inside=1"), "%s: %s", names[i], r.out);
    }
    const char *env[] = {"CALLGUARD_SERIALIZE=toyCompile=igc", NULL};
    const char *plain[] = {"plain", NULL};
    CHECK(cgtest_child(&r, env, "child_variant_race", plain) == 0);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "env: status 0x%x, stderr: %s", r.status, r.err);
    CHECKF(strstr(r.out, "failed=0 row_calls=9 compiles=9 max_inside=1"), "env: %s", r.out);
    return 0;
}

static const cg_site_info *site_named(const cg_site_info *v, long n, const char *name)
{
    for (long i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0) return &v[i];
    return NULL;
}

static int test_variants_listed_under_their_base(int argc, char **argv)
{
    (void)argc, (void)argv;
    cg_site_info v[64];
    long n = cg_list_sites("toy", v, 64);
    CHECK(n > 0 && n <= 64);
    const cg_site_info *a = site_named(v, n, "toyCompile_v2"), *b = site_named(v, n, "toyCompile_v2_ptds");
    CHECK(a && a->variant_of && strcmp(a->variant_of, "toyCompile") == 0);
    CHECK(b && b->variant_of && strcmp(b->variant_of, "toyCompile") == 0);
    /* The base's policy from apis/toy.ini: blocking, with its reason. */
    CHECK(a->blocking && a->reason && strstr(a->reason, "compiles"));
    /* A suffixed name whose base the header lacks stands alone. */
    const cg_site_info *q = site_named(v, n, "toyQuery_v2");
    CHECK(q && q->variant_of == NULL);
    cg_stats_enable(1);
    uint32_t value = 0;
    CHECK(toyQuery_v2(&value) == TOY_SUCCESS && value == 2);
    cg_site_stats s;
    CHECK(cg_get_stats("toyQuery_v2", &s) == CG_OK && s.calls == 1);
    CHECK(cg_get_stats("toyQuery", &s) == CG_ENOENT);
    return 0;
}

/* ---- a hand-written resolver returns guarded wrappers --------------------------- */

static int in_layer(void *fn)
{
    Dl_info info;
    return fn && dladdr(fn, &info) && info.dli_fname && strstr(info.dli_fname, "libcallguard_toy.so");
}

static int test_hand_written_resolver_returns_wrappers(int argc, char **argv)
{
    (void)argc, (void)argv;
    cg_stats_enable(1);
    cg_reset_stats();
    /* The toy library answers with its own toyCompile_v2; the layer's
     * hand-written toyGetProcAddress hands back the layer's wrapper of it. */
    void *fn = NULL;
    CHECK(toyGetProcAddress("toyCompile", 2, &fn) == TOY_SUCCESS);
    CHECKF(in_layer(fn), "toyGetProcAddress(toyCompile) gave %p, not the layer's wrapper", fn);
    CHECK(fn == dlsym(RTLD_DEFAULT, "toyCompile_v2"));
    toy_program_t p = NULL;
    CHECK(((__typeof__(toyCompile_v2) *)fn)(dev0(), "kernel", 0, 0, &p) == TOY_SUCCESS);
    toyProgramRelease(p);
    CHECK(toyGetProcAddress("toyCompile", 1, &fn) == TOY_SUCCESS && fn == dlsym(RTLD_DEFAULT, "toyCompile"));
    CHECK(((__typeof__(toyCompile) *)fn)(dev0(), "kernel", 0, &p) == TOY_SUCCESS);
    toyProgramRelease(p);
    cg_site_stats s;
    CHECK(cg_get_stats("toyCompile", &s) == CG_OK);
    CHECKF(s.calls == 2, "toyCompile's row counts %llu calls through resolved pointers, expected 2",
           (unsigned long long)s.calls);
    /* Asked for itself, it returns itself (the CUDA runtime's first lookup). */
    CHECK(toyGetProcAddress("toyGetProcAddress", 2, &fn) == TOY_SUCCESS);
    CHECK(fn == (void *)toyGetProcAddress && in_layer(fn));
    /* An unknown name: the library's answer, unchanged. */
    fn = &fn;
    CHECK(toyGetProcAddress("toyNothing", 2, &fn) == TOY_ERROR_INVALID_VALUE && fn == NULL);
    /* The resolver is a site of its own: its calls are counted. */
    CHECK(cg_get_stats("toyGetProcAddress", &s) == CG_OK && s.calls == 4 && s.errors == 1);
    /* And it follows its policy: serialized, it still answers. */
    CHECK(cg_serialize("toyGetProcAddress", "resolve", CG_SCOPE_PROCESS) == CG_OK);
    CHECK(toyGetProcAddress("toyAdd", 2, &fn) == TOY_SUCCESS && fn == dlsym(RTLD_DEFAULT, "toyAdd"));
    int32_t sum = 0;
    CHECK(((__typeof__(toyAdd) *)fn)(2, 3, &sum) == TOY_SUCCESS && sum == 5);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"child_variant_race", child_variant_race},
    {"variants_race_like_their_base", test_variants_race_like_their_base},
    {"variants_follow_base_serialize_and_row", test_variants_follow_base_serialize_and_row},
    {"variants_listed_under_their_base", test_variants_listed_under_their_base},
    {"hand_written_resolver_returns_wrappers", test_hand_written_resolver_returns_wrappers},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
