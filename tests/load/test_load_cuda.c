/* cg_load_binary on CUDA: the stand-in libcuda.so.1 (tests/cuda) behind
 * the layer linked in libcuda's place: PTX with the primary context, cubins
 * from the disk cache, dynamic shared memory. */
#define _GNU_SOURCE
#include "load_helpers.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int run_cuda(cgtest_result *r, const char *const *env, const char *mode, const char *threads,
                    const char *kernels, const char *shared)
{
    const char *argv[] = {worker("CG_LOAD_WORKER_CUDA"), mode, threads, kernels, shared, NULL};
    cgtest_run(r, env, argv);
    fprintf(stderr, "--- %s %s %s %s\n%s%s", mode, threads, kernels, shared, r->out, r->err);
    return 0;
}

#define CUDA_RACE "CGCUDA_COMPILER_RACE=abort", "CGCUDA_COMPILE_MS=20"

/* CUDA on the stand-in: 8 threads without a current context load 16 PTX
 * kernels with the JIT aborting on overlap and the JIT entry points
 * serialized in one domain: each thread got the primary context, every
 * kernel loaded (PTX linked once into a cubin); a second process loads
 * every cubin from disk: the stand-in's linker never runs. */
static int cuda_ptx_loads_with_primary_context_then_cubins_from_disk(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {CUDA_RACE, "CALLGUARD_SERIALIZE=cuModuleLoadData=jit,cuLinkComplete=jit", fresh_cache("c"),
                         NULL};
    cgtest_result r;
    run_cuda(&r, env, "ptx", "8", "16", "0");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 16 && figure(r.out, "had_context") == 16);
    CHECK(figure(r.out, "standin_links") == 16 && figure(r.out, "standin_max_inside") == 1);
    CHECK(figure(r.out, "disk_writes") == 16);
    CHECK(figure(r.out, "regs") == 32 && figure(r.out, "spills") == 16 && figure(r.out, "max_threads") == 1024);
    run_cuda(&r, env, "ptx", "8", "16", "0");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 16 && figure(r.out, "from_disk") == 16 && figure(r.out, "builds") == 0);
    CHECK(figure(r.out, "standin_links") == 0 && figure(r.out, "standin_max_inside") == 0);
    return 0;
}

/* Above 48 KiB of dynamic shared memory the function is opted in to the
 * device's maximum; beyond that maximum it is an out-of-resources error. */
static int cuda_shared_memory_opt_in_above_48k_and_out_of_resources(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {fresh_cache("c"), NULL};
    cgtest_result r;
    run_cuda(&r, env, "ptx", "1", "1", "65536");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "opted_in") == 1 && figure(r.out, "dynamic_shared") == 232448 - 1024);
    run_cuda(&r, env, "ptx", "1", "1", "40000");
    CHECK(exited_ok(&r) && figure(r.out, "opted_in") == 0);
    run_cuda(&r, env, "ptx", "1", "1", "300000");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_LOAD_ERESOURCES call=- result=0 oor=1 message=out of resource: shared memory, "
                        "Required: 300000, Hardware limit: 232448"));
    return 0;
}

static int cuda_unknown_kernel_name_is_enoent(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {fresh_cache("c"), NULL};
    cgtest_result r;
    run_cuda(&r, env, "badname", "1", "1", "0");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_ENOENT call=cuModuleGetFunction"));
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"cuda_ptx_loads_with_primary_context_then_cubins_from_disk",
     cuda_ptx_loads_with_primary_context_then_cubins_from_disk},
    {"cuda_shared_memory_opt_in_above_48k_and_out_of_resources",
     cuda_shared_memory_opt_in_above_48k_and_out_of_resources},
    {"cuda_unknown_kernel_name_is_enoent", cuda_unknown_kernel_name_is_enoent},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
