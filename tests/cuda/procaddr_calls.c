/* Calls the driver the way the CUDA runtime (and so PyTorch and Triton) does: it takes
 * cuGetProcAddress_v2, asks it first for "cuGetProcAddress" itself, and from then on calls only through
 * pointers that resolver returns, each asked with a CUDA version (and the per-thread-stream flag for the
 * stream calls). Prints "ok" and, when given the stand-in's path, how often the stand-in's variants were
 * entered: "cuLaunchKernel_ptsz=1 ...".
 *
 *   cuda_procaddr_calls default|dlopen [STANDIN]
 *     default: cuGetProcAddress_v2 from the process's scope (linked, or a layer preloaded);
 *     dlopen:  from dlopen("libcuda.so.1"), as cuda-python and the runtime open it. */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa_v1_fn)(const char *, void **, int, cuuint64_t);

static gpa_v2_fn gpa;

static void *get(const char *name, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    if (gpa(name, &p, version, flags, &st) != CUDA_SUCCESS || st != CU_GET_PROC_ADDRESS_SUCCESS || !p) {
        fprintf(stderr, "cuGetProcAddress(%s, %d): no function (status %d)\n", name, version, (int)st);
        return NULL;
    }
    return p;
}

#define PTDS CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
#define FAIL(what)                                                                                                     \
    do {                                                                                                               \
        fprintf(stderr, "failed: %s\n", what);                                                                         \
        return 1;                                                                                                      \
    } while (0)
#define CALL(expr)                                                                                                     \
    do {                                                                                                               \
        if ((expr) != CUDA_SUCCESS) FAIL(#expr);                                                                       \
    } while (0)

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "default") != 0 && strcmp(argv[1], "dlopen") != 0)) {
        fprintf(stderr, "usage: cuda_procaddr_calls default|dlopen [STANDIN]\n");
        return 2;
    }
    void *h = RTLD_DEFAULT;
    if (strcmp(argv[1], "dlopen") == 0 && !(h = dlopen("libcuda.so.1", RTLD_NOW))) FAIL(dlerror());
    gpa_v2_fn first = (gpa_v2_fn)dlsym(h, "cuGetProcAddress_v2");
    if (!first) FAIL("dlsym cuGetProcAddress_v2");

    /* The runtime's first question, then only the answer is used. */
    void *self = NULL;
    CUdriverProcAddressQueryResult st;
    CALL(first("cuGetProcAddress", &self, 12000, 0, &st));
    if (!self) FAIL("cuGetProcAddress for itself");
    gpa = (gpa_v2_fn)self;

    CUresult (*init)(unsigned) = get("cuInit", 2000, 0);
    CUresult (*device_get)(CUdevice *, int) = get("cuDeviceGet", 2000, 0);
    CUresult (*ctx_create)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice) = get("cuCtxCreate", 12050, 0);
    CUresult (*ctx_destroy)(CUcontext) = get("cuCtxDestroy", 4000, 0);
    CUresult (*load)(CUmodule *, const void *) = get("cuModuleLoadData", 2000, 0);
    CUresult (*get_function)(CUfunction *, CUmodule, const char *) = get("cuModuleGetFunction", 2000, 0);
    CUresult (*unload)(CUmodule) = get("cuModuleUnload", 2000, 0);
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                       void **, void **) = get("cuLaunchKernel", 7000, PTDS);
    CUresult (*sync)(CUstream) = get("cuStreamSynchronize", 7000, PTDS);
    CUresult (*mem_alloc)(CUdeviceptr *, size_t) = get("cuMemAlloc", 3020, 0);
    CUresult (*mem_free)(CUdeviceptr) = get("cuMemFree", 3020, 0);
    CUresult (*htod)(CUdeviceptr, const void *, size_t) = get("cuMemcpyHtoD", 7000, PTDS);
    CUresult (*dtoh)(void *, CUdeviceptr, size_t) = get("cuMemcpyDtoH", 3020, 0);
    gpa_v1_fn gpa4 = get("cuGetProcAddress", 11030, 0); /* the 4-argument form, asked of the resolver */
    if (!init || !device_get || !ctx_create || !ctx_destroy || !load || !get_function || !unload || !launch || !sync ||
        !mem_alloc || !mem_free || !htod || !dtoh || !gpa4)
        FAIL("an entry point is missing");
    CUresult (*version)(int *) = NULL;
    CALL(gpa4("cuDriverGetVersion", (void **)&version, 2020, 0));
    if (!version) FAIL("cuDriverGetVersion through the 4-argument form");

    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUdeviceptr d;
    int v = 0;
    char in[] = "guarded", out[sizeof in] = "";
    CALL(init(0));
    CALL(version(&v));
    CALL(device_get(&dev, 0));
    CALL(ctx_create(&ctx, NULL, 0, dev));
    CALL(load(&mod, ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n"));
    CALL(get_function(&f, mod, "k"));
    CALL(launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    CALL(sync(NULL));
    CALL(mem_alloc(&d, sizeof in));
    CALL(htod(d, in, sizeof in));
    CALL(dtoh(out, d, sizeof in));
    if (strcmp(in, out) != 0) FAIL("the copy came back different");
    CALL(mem_free(d));
    CALL(unload(mod));
    CALL(ctx_destroy(ctx));
    printf("ok\n");

    if (argc > 2) {
        void *s = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
        int (*calls)(const char *) = s ? (int (*)(const char *))dlsym(s, "cgcuda_standin_calls") : NULL;
        if (!calls) FAIL("the stand-in is not loaded");
        static const char *const names[] = {"cuCtxCreate_v4",           "cuCtxDestroy_v2",      "cuLaunchKernel_ptsz",
                                            "cuStreamSynchronize_ptsz", "cuMemcpyHtoD_v2_ptds", "cuMemcpyDtoH_v2",
                                            "cuLaunchKernel",           "cuStreamSynchronize"};
        for (size_t i = 0; i < sizeof names / sizeof *names; i++)
            printf("%s%s=%d", i ? " " : "", names[i], calls(names[i]));
        printf("\n");
    }
    return 0;
}
