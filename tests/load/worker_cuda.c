/* cg_load_binary on CUDA: the stand-in libcuda.so.1 (tests/cuda/standin.c)
 * behind libcallguard_cuda.so linked in libcuda's place
 * (CALLGUARD_CUDA_LIBRARY names the stand-in). THREADS threads with no
 * current context load KERNELS distinct PTX kernels; figures as key=value.
 *
 * Usage: load_worker_cuda MODE THREADS KERNELS [SHARED_MEM]
 *   ptx      kernel i is the PTX ".entry k<i>" with a 64-byte local depot
 *   badname  a kernel name the module lacks */
#define _GNU_SOURCE
#include "callguard/load.h"

#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *mode;
static int nkernels;
static size_t shared;
static atomic_int next, loaded, failed, from_disk, had_context, opted_in;

static void *worker(void *arg)
{
    (void)arg;
    for (int i; (i = atomic_fetch_add(&next, 1)) < nkernels;) {
        char ptx[256], name[32];
        snprintf(ptx, sizeof ptx,
                 ".version 8.0\n.target sm_90\n.visible .entry k%d(.param .u64 a)\n{\n"
                 "  .local .align 4 .b8 __local_depot%d[64];\n  ret;\n}\n",
                 i, i);
        snprintf(name, sizeof name, strcmp(mode, "badname") == 0 ? "missing" : "k%d", i);
        cg_load_request req = {.api = CG_LOAD_API_CUDA,
                               .cuda_device = 0,
                               .bytes = ptx,
                               .size = strlen(ptx),
                               .format = CG_LOAD_FORMAT_IL,
                               .kernel_name = name,
                               .shared_mem = shared};
        cg_load_result *r = NULL;
        int rc = cg_load_binary(&req, &r);
        if (rc != CG_OK) {
            atomic_fetch_add(&failed, 1);
            printf("error=%s call=%s result=%ld oor=%d message=%s\n", cg_load_status_name(rc),
                   r->failed_call ? r->failed_call : "-", r->api_result, r->out_of_resources, r->message);
        } else {
            atomic_fetch_add(&loaded, 1);
            if (r->source == CG_LOAD_SOURCE_DISK) atomic_fetch_add(&from_disk, 1);
            CUcontext c = NULL;
            if (cuCtxGetCurrent(&c) == CUDA_SUCCESS && c) atomic_fetch_add(&had_context, 1);
            int dyn = 0;
            cuFuncGetAttribute(&dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, r->kernel);
            if (dyn > 49152) atomic_fetch_add(&opted_in, 1);
            if (i == 0)
                printf("regs=%d spills=%d max_threads=%d dynamic_shared=%d\n", r->n_regs, r->n_spills, r->max_threads,
                       dyn);
        }
        cg_load_result_free(r);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: load_worker_cuda MODE THREADS KERNELS [SHARED_MEM]\n");
        return 2;
    }
    mode = argv[1];
    int nthreads = atoi(argv[2]);
    nkernels = atoi(argv[3]);
    shared = argc > 4 ? strtoul(argv[4], NULL, 10) : 0;
    if (nthreads < 1 || nthreads > 64 || nkernels < 1) return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (cuInit(0) != CUDA_SUCCESS) return 3;
    pthread_t t[64];
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    /* what the stand-in saw, below the layer */
    int links = -1, loads = -1, inside = -1;
    const char *standin = getenv("CALLGUARD_CUDA_LIBRARY");
    void *h = standin ? dlopen(standin, RTLD_NOW | RTLD_NOLOAD) : NULL;
    int (*calls)(const char *) = h ? (int (*)(const char *))dlsym(h, "cgcuda_standin_calls") : NULL;
    int (*max_inside)(void) = h ? (int (*)(void))dlsym(h, "cgcuda_standin_max_inside") : NULL;
    if (calls) links = calls("cuLinkComplete"), loads = calls("cuModuleLoadData");
    if (max_inside) inside = max_inside();
    cg_load_stats s;
    cg_load_get_stats(&s);
    printf("loaded=%d failed=%d from_disk=%d had_context=%d opted_in=%d\n", atomic_load(&loaded), atomic_load(&failed),
           atomic_load(&from_disk), atomic_load(&had_context), atomic_load(&opted_in));
    printf("standin_links=%d standin_loads=%d standin_max_inside=%d\n", links, loads, inside);
    printf("requests=%llu builds=%llu disk_hits=%llu memory_hits=%llu disk_writes=%llu corrupt=%llu\n",
           (unsigned long long)s.requests, (unsigned long long)s.builds, (unsigned long long)s.disk_hits,
           (unsigned long long)s.memory_hits, (unsigned long long)s.disk_writes, (unsigned long long)s.corrupt);
    return 0;
}
