/* The stand-in libcuda.so.1 itself: the tests of the CUDA layer rely on it answering as the real driver
 * does, so its own behaviour is checked here, without callguard. This program is linked to the stand-in
 * (compiled with -D__CUDA_API_VERSION_INTERNAL: every name below is the exported one). */
#define _GNU_SOURCE
#include "../cgtest.h"

#include <cuda.h>

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>

int cgcuda_standin_calls(const char *name);

static void show(const cgtest_result *r)
{
    fprintf(stderr, "-- child stdout:\n%s-- child stderr:\n%s--\n", r->out, r->err);
}

#define CU_OK(call) CHECKF((call) == CUDA_SUCCESS, "%s", #call)

static int cuda_standin_devices_and_contexts(int argc, char **argv)
{
    (void)argc, (void)argv;
    int n = -1, version = 0;
    CHECK(cuDeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED); /* before cuInit, as the driver says */
    CHECK(cuInit(1) == CUDA_ERROR_INVALID_VALUE);
    CU_OK(cuInit(0));
    CU_OK(cuDriverGetVersion(&version));
    CHECK(version == CUDA_VERSION);
    CU_OK(cuDeviceGetCount(&n));
    CHECK(n == 1);
    CUdevice dev;
    CHECK(cuDeviceGet(&dev, 1) == CUDA_ERROR_INVALID_DEVICE);
    CU_OK(cuDeviceGet(&dev, 0));
    char name[128];
    CU_OK(cuDeviceGetName(name, sizeof name, dev));
    CHECK(strstr(name, "stand-in") != NULL);
    unsigned int small;
    size_t big;
    CU_OK(cuDeviceTotalMem(&small, dev));
    CU_OK(cuDeviceTotalMem_v2(&big, dev));
    CHECK(big > small); /* the _v2 form reports what a 32-bit count cannot */

    /* Each form of cuCtxCreate makes a context current; cuCtxDestroy_v2 destroys it. */
    CUcontext c1, c2, c3, c4, cur;
    CU_OK(cuCtxCreate(&c1, 0, dev));
    CU_OK(cuCtxCreate_v2(&c2, 0, dev));
    CU_OK(cuCtxCreate_v3(&c3, NULL, 0, 0, dev));
    CU_OK(cuCtxCreate_v4(&c4, NULL, 0, dev));
    CU_OK(cuCtxGetCurrent(&cur));
    CHECK(cur == c4);
    CU_OK(cuCtxSetCurrent(c1));
    CUdevice d;
    CU_OK(cuCtxGetDevice(&d));
    CHECK(d == dev);
    CU_OK(cuCtxDestroy(c1));
    CU_OK(cuCtxDestroy_v2(c2));
    CU_OK(cuCtxDestroy_v2(c3));
    CU_OK(cuCtxDestroy_v2(c4));
    CHECK(cuCtxGetDevice(&d) == CUDA_ERROR_INVALID_CONTEXT); /* the current one was destroyed */

    CUcontext p1, p2;
    CU_OK(cuDevicePrimaryCtxRetain(&p1, dev));
    CU_OK(cuDevicePrimaryCtxRetain(&p2, dev));
    CHECK(p1 == p2);
    CHECK(cuCtxDestroy_v2(p1) == CUDA_ERROR_INVALID_CONTEXT); /* a primary context is released, not destroyed */
    CU_OK(cuDevicePrimaryCtxRelease(dev));
    CU_OK(cuDevicePrimaryCtxRelease_v2(dev));
    CHECK(cuDevicePrimaryCtxRelease_v2(dev) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cgcuda_standin_calls("cuCtxCreate_v3") == 1);
    return 0;
}

/* cudaTypedefs.h's versions: the driver returns the newest form whose version is not above the one asked. */
static int cuda_standin_procaddress_variant_by_version(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const struct {
        const char *symbol;
        int version;
        cuuint64_t flags;
        const char *expect;
    } cases[] = {
        {"cuCtxCreate", 2000, 0, "cuCtxCreate"},
        {"cuCtxCreate", 3020, 0, "cuCtxCreate_v2"},
        {"cuCtxCreate", 11030, 0, "cuCtxCreate_v2"},
        {"cuCtxCreate", 11040, 0, "cuCtxCreate_v3"},
        {"cuCtxCreate", 12050, 0, "cuCtxCreate_v4"},
        {"cuCtxCreate", 13000, 0, "cuCtxCreate_v4"},
        {"cuStreamSynchronize", 13000, 0, "cuStreamSynchronize"},
        {"cuStreamSynchronize", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuStreamSynchronize"},
        {"cuStreamSynchronize", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuStreamSynchronize_ptsz"},
        {"cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuLaunchKernel_ptsz"},
        {"cuCtxCreate", 12050, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuCtxCreate_v4"}, /* no _ptsz form */
        {"cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, "cuMemcpyHtoD_v2_ptds"},
        {"cuMemcpyHtoD", 12000, 0, "cuMemcpyHtoD_v2"},
        {"cuDevicePrimaryCtxRelease", 10000, 0, "cuDevicePrimaryCtxRelease"},
        {"cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2"},
        {"cuGetProcAddress", 11030, 0, "cuGetProcAddress"},
        {"cuGetProcAddress", 12000, 0, "cuGetProcAddress_v2"},
    };
    void *self = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(self != NULL);
    CU_OK(cuInit(0)); /* not needed by cuGetProcAddress; here so both forms are asked of an initialized driver */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        void *fn = NULL;
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
        CU_OK(cuGetProcAddress_v2(cases[i].symbol, &fn, cases[i].version, cases[i].flags, &st));
        CHECKF(fn == dlsym(self, cases[i].expect) && fn != NULL && st == CU_GET_PROC_ADDRESS_SUCCESS,
               "%s at %d flags %llu: expected %s", cases[i].symbol, cases[i].version,
               (unsigned long long)cases[i].flags, cases[i].expect);
        void *fn4 = NULL; /* the 4-argument form answers the same */
        CU_OK(cuGetProcAddress(cases[i].symbol, &fn4, cases[i].version, cases[i].flags));
        CHECK(fn4 == fn);
    }
    /* A pointer the resolver returns works: cuDriverGetVersion through it. */
    void *fn = NULL;
    CU_OK(cuGetProcAddress_v2("cuDriverGetVersion", &fn, 12000, 0, NULL));
    int v = 0;
    CU_OK(((CUresult(*)(int *))fn)(&v));
    CHECK(v == CUDA_VERSION);
    return 0;
}

static int cuda_standin_procaddress_unknown_empty_and_old(int argc, char **argv)
{
    (void)argc, (void)argv;
    void *fn = (void *)1;
    CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
    /* Unknown or empty name: CUDA_SUCCESS, NULL, and the status says why (cuda.h 13.0). */
    CU_OK(cuGetProcAddress_v2("cuNoSuchEntryPoint", &fn, 12000, 0, &st));
    CHECK(fn == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    fn = (void *)1;
    CU_OK(cuGetProcAddress_v2("", &fn, 12000, 0, &st));
    CHECK(fn == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    /* A version older than the entry point. */
    fn = (void *)1;
    CU_OK(cuGetProcAddress_v2("cuGetProcAddress", &fn, 11020, 0, &st));
    CHECK(fn == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CU_OK(cuGetProcAddress_v2("cuMemAlloc", &fn, 2000, 0, NULL)); /* the status is optional */
    CHECK(fn == NULL);
    /* The per-thread flag at a version older than the per-thread forms (7000): not sufficient, no legacy-stream
     * fallback (what the real driver 580.159.04 answers on the H200). */
    fn = (void *)1;
    CU_OK(cuGetProcAddress_v2("cuStreamSynchronize", &fn, 6050, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    CHECK(fn == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    fn = (void *)1;
    CU_OK(cuGetProcAddress_v2("cuMemcpyDtoH", &fn, 3020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
    CHECK(fn == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CHECK(cuGetProcAddress("cuStreamSynchronize", &fn, 6050, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) ==
              CUDA_ERROR_NOT_FOUND &&
          fn == NULL);
    /* The 4-argument form reports both as CUDA_ERROR_NOT_FOUND (CUDA 11's documentation). */
    CHECK(cuGetProcAddress("cuNoSuchEntryPoint", &fn, 12000, 0) == CUDA_ERROR_NOT_FOUND && fn == NULL);
    CHECK(cuGetProcAddress("cuGetProcAddress", &fn, 11020, 0) == CUDA_ERROR_NOT_FOUND && fn == NULL);
    /* Bad arguments, and a version newer than the driver. */
    CHECK(cuGetProcAddress_v2(NULL, &fn, 12000, 0, &st) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGetProcAddress_v2("cuInit", NULL, 12000, 0, &st) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGetProcAddress_v2("cuInit", &fn, 12000, 4, &st) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuGetProcAddress_v2("cuInit", &fn, CUDA_VERSION + 10, 0, &st) == CUDA_ERROR_INVALID_VALUE);
    return 0;
}

static int cuda_standin_export_table(int argc, char **argv)
{
    (void)argc, (void)argv;
    const CUuuid id = {{'c', 'g', ' ', 's', 't', 'a', 'n', 'd', '-', 'i', 'n', ' ', 't', 'b', 'l', 0}};
    CUuuid other = id;
    other.bytes[0] = 'x';
    const void *table = NULL;
    CU_OK(cuGetExportTable(&table, &id));
    CHECK(table != NULL && ((const void *const *)table)[1] != NULL);
    CHECK(cuGetExportTable(&table, &other) == CUDA_ERROR_INVALID_VALUE && table == NULL);
    return 0;
}

/* argv: COMPILE_RACE (linked to the stand-in) */
static int cuda_standin_compile_race_aborts(int argc, char **argv)
{
    CHECK(argc == 1);
    cgtest_result r;
    const char *env[] = {"CGCUDA_COMPILER_RACE=abort", "CGCUDA_COMPILE_MS=50", NULL};
    const char *args[] = {argv[0], NULL};
    CHECK(cgtest_run(&r, env, args) == 0);
    show(&r);
    CHECKF(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT, "expected SIGABRT, wait status 0x%x", r.status);
    CHECK(strstr(r.err, "threads inside cuModuleLoadData at once") || strstr(r.err, "entered cuModuleLoadData"));
    return 0;
}

/* argv: COMPILE_RACE STANDIN: without the abort mode every module loads, and several threads were inside at
 * once (the race window is real). */
static int cuda_standin_compiles_overlap_without_abort_mode(int argc, char **argv)
{
    CHECK(argc == 2);
    cgtest_result r;
    const char *env[] = {"CGCUDA_COMPILE_MS=50", NULL};
    const char *args[] = {argv[0], argv[1], NULL};
    CHECK(cgtest_run(&r, env, args) == 0);
    show(&r);
    CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "wait status 0x%x", r.status);
    int n = 0, inside = 0;
    CHECK(sscanf(r.out, "loaded %d modules, at most %d threads inside", &n, &inside) == 2);
    CHECK(n == 16 && inside > 1);
    return 0;
}

/* A launch keeps its stream busy for CGCUDA_KERNEL_MS; cuStreamSynchronize waits for it, on the legacy stream
 * and, in the _ptsz form, on the thread's own default stream. */
static int cuda_standin_stream_synchronize_waits_for_kernel(int argc, char **argv)
{
    (void)argv;
    if (argc == 0) {
        cgtest_result r;
        const char *env[] = {"CGCUDA_KERNEL_MS=300", NULL};
        const char *args[] = {"child", NULL};
        CHECK(cgtest_child(&r, env, "cuda_standin_stream_synchronize_waits_for_kernel", args) == 0);
        show(&r);
        CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0, "wait status 0x%x", r.status);
        return 0;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CU_OK(cuInit(0));
    CU_OK(cuDeviceGet(&dev, 0));
    CU_OK(cuCtxCreate_v2(&ctx, 0, dev));
    CU_OK(cuModuleLoadData(&mod, ".version 8.0\n.visible .entry spin()\n{ ret; }\n"));
    CU_OK(cuModuleGetFunction(&f, mod, "spin"));
    CHECK(cuModuleGetFunction(&f, mod, "other") == CUDA_ERROR_NOT_FOUND);
    double t0 = cgtest_now();
    CU_OK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CU_OK(cuStreamSynchronize(NULL));
    double waited = cgtest_now() - t0;
    CHECKF(waited >= 0.3, "waited %.3f s", waited);
    t0 = cgtest_now();
    CU_OK(cuLaunchKernel_ptsz(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CU_OK(cuStreamSynchronize_ptsz(NULL));
    waited = cgtest_now() - t0;
    CHECKF(waited >= 0.3, "waited %.3f s", waited);
    CU_OK(cuModuleUnload(mod));
    CU_OK(cuCtxDestroy_v2(ctx));
    return 0;
}

static int cuda_standin_memory_round_trip(int argc, char **argv)
{
    (void)argc, (void)argv;
    CUdevice dev;
    CUcontext ctx;
    CU_OK(cuInit(0));
    CU_OK(cuDeviceGet(&dev, 0));
    CU_OK(cuCtxCreate_v2(&ctx, 0, dev));
    CUdeviceptr d;
    char in[] = "through the stand-in", out[sizeof in] = "";
    CU_OK(cuMemAlloc_v2(&d, sizeof in));
    CU_OK(cuMemcpyHtoD_v2(d, in, sizeof in));
    CU_OK(cuMemcpyDtoH_v2_ptds(out, d, sizeof in));
    CHECK(strcmp(in, out) == 0);
    CU_OK(cuMemFree_v2(d));
    const char *s = NULL;
    CU_OK(cuGetErrorName(CUDA_ERROR_NO_DEVICE, &s));
    CHECK(strcmp(s, "CUDA_ERROR_NO_DEVICE") == 0);
    CU_OK(cuCtxDestroy_v2(ctx));
    return 0;
}

static int cuda_standin_bad_environment_exits_2(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const char *const bad[][2] = {{"CGCUDA_COMPILE_MS=ten", "CGCUDA_COMPILE_MS=ten is invalid"},
                                         {"CGCUDA_COMPILER_RACE=yes", "accepted: off or abort"},
                                         {"CGCUDA_TYPO=1", "CGCUDA_TYPO=1 is invalid; accepted: CGCUDA_COMPILE_MS"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cgtest_result r;
        const char *env[] = {bad[i][0], NULL};
        const char *args[] = {NULL};
        CHECK(cgtest_child(&r, env, "cuda_standin_memory_round_trip", args) == 0);
        CHECKF(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2, "%s: wait status 0x%x", bad[i][0], r.status);
        CHECKF(strstr(r.err, bad[i][1]) != NULL, "%s: stderr %s", bad[i][0], r.err);
    }
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"cuda_standin_devices_and_contexts", cuda_standin_devices_and_contexts},
    {"cuda_standin_procaddress_variant_by_version", cuda_standin_procaddress_variant_by_version},
    {"cuda_standin_procaddress_unknown_empty_and_old", cuda_standin_procaddress_unknown_empty_and_old},
    {"cuda_standin_export_table", cuda_standin_export_table},
    {"cuda_standin_compile_race_aborts", cuda_standin_compile_race_aborts},
    {"cuda_standin_compiles_overlap_without_abort_mode", cuda_standin_compiles_overlap_without_abort_mode},
    {"cuda_standin_stream_synchronize_waits_for_kernel", cuda_standin_stream_synchronize_waits_for_kernel},
    {"cuda_standin_memory_round_trip", cuda_standin_memory_round_trip},
    {"cuda_standin_bad_environment_exits_2", cuda_standin_bad_environment_exits_2},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
