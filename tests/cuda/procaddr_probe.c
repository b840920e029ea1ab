/* Asks a library's cuGetProcAddress_v2 and cuGetProcAddress a fixed list of questions and prints, one line
 * each, what came back:
 *
 *   SYMBOL VERSION FLAGS: v2 RC STATUS NAME WHERE | v1 RC NAME WHERE
 *
 * NAME is the exported name of the returned pointer (dladdr; "-" for NULL, "?" for an address that is no
 * export); WHERE is "same" when the pointer lies in the library asked, else "other". Run on the real driver,
 * on the stand-in, or on the layer (whose answers must be its own wrappers: "same"), the lines can be
 * compared: tests/cuda/procaddr_expected.txt is what the stand-in (and the real driver) must print,
 * procaddr_expected_layer.txt what the layer in front of either must; tests/gpu/check.sh checks both on a
 * GPU machine.
 *
 *   cuda_procaddr_probe LIBRARY.so   (a path; RTLD_LOCAL, so nothing else in the process answers) */
#define _GNU_SOURCE
#include <cuda.h>

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa_v1_fn)(const char *, void **, int, cuuint64_t);

static const struct {
    const char *symbol;
    int version;
    unsigned flags;
} questions[] = {
    {"cuInit", 2000, 0},
    {"cuDriverGetVersion", 12000, 0},
    {"cuCtxCreate", 2000, 0},
    {"cuCtxCreate", 3020, 0},
    {"cuCtxCreate", 11040, 0},
    {"cuCtxCreate", 12050, 0},
    {"cuCtxCreate", 13000, 0},
    {"cuDevicePrimaryCtxRelease", 7000, 0},
    {"cuDevicePrimaryCtxRelease", 12000, 0},
    {"cuModuleLoadData", 12000, 0},
    {"cuLaunchKernel", 12000, 0},
    {"cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM},
    {"cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM},
    {"cuStreamSynchronize", 12000, 0},
    {"cuStreamSynchronize", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM},
    {"cuStreamSynchronize", 6050, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM},
    {"cuMemcpyHtoD", 12000, 0},
    {"cuMemcpyHtoD", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM},
    {"cuMemcpyDtoH", 3020, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM},
    {"cuGetExportTable", 12000, 0},
    /* the resolver asked for itself: the CUDA runtime's first question */
    {"cuGetProcAddress", 11030, 0},
    {"cuGetProcAddress", 12000, 0},
    {"cuGetProcAddress", 13000, 0},
    /* what no driver answers */
    {"cuGetProcAddress", 11020, 0},
    {"cuNoSuchEntryPoint", 12000, 0},
    {"", 12000, 0},
};

static const char *name_of(void *p, void *lib_base, const char **where)
{
    Dl_info info;
    *where = "-";
    if (!p) return "-";
    if (!dladdr(p, &info)) {
        *where = "other";
        return "?";
    }
    *where = info.dli_fbase == lib_base ? "same" : "other";
    return info.dli_sname && info.dli_saddr == p ? info.dli_sname : "?";
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cuda_procaddr_probe LIBRARY.so\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "cuda_procaddr_probe: %s\n", dlerror());
        return 1;
    }
    gpa_v2_fn v2 = (gpa_v2_fn)dlsym(h, "cuGetProcAddress_v2");
    gpa_v1_fn v1 = (gpa_v1_fn)dlsym(h, "cuGetProcAddress");
    Dl_info self;
    if (!v2 || !v1 || !dladdr((void *)v2, &self)) {
        fprintf(stderr, "cuda_procaddr_probe: %s lacks cuGetProcAddress or cuGetProcAddress_v2\n", argv[1]);
        return 1;
    }
    for (size_t i = 0; i < sizeof questions / sizeof *questions; i++) {
        void *p2 = NULL, *p1 = NULL;
        CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)-1;
        CUresult r2 = v2(questions[i].symbol, &p2, questions[i].version, questions[i].flags, &st);
        CUresult r1 = v1(questions[i].symbol, &p1, questions[i].version, questions[i].flags);
        const char *w2, *w1;
        const char *n2 = name_of(p2, self.dli_fbase, &w2);
        printf("%s %d %u: v2 %d %d %s %s", questions[i].symbol[0] ? questions[i].symbol : "\"\"", questions[i].version,
               questions[i].flags, (int)r2, (int)st, n2, w2);
        const char *n1 = name_of(p1, self.dli_fbase, &w1);
        printf(" | v1 %d %s %s\n", (int)r1, n1, w1);
    }
    return 0;
}
