/* cg_load_binary on Level Zero (the real loader, the simulator's driver):
 * builds serialized or not, the memory and disk caches, the large-GRF
 * retry, what a failed build says, processes sharing one cache. */
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

#define SERIALIZED "CGSIM_COMPILER_RACE=abort", "CGSIM_COMPILE_MS=50", "CALLGUARD_SERIALIZE=zeModuleCreate"

/* 16 threads load 16 distinct kernels with the simulator's compiler aborting
 * on overlap and zeModuleCreate serialized by the layer: every kernel loads;
 * a second process loads every one from the disk cache, the driver's own
 * build log saying "from a native binary" (no SPIR-V compile). */
static int ze_async_compile_loads_every_kernel_then_second_process_hits_disk(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {SERIALIZED, fresh_cache("c"), NULL};
    cgtest_result r;
    run_ze(&r, env, "distinct", "16", "16");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 16 && figure(r.out, "failed") == 0);
    CHECK(figure(r.out, "distinct_modules") == 16);
    CHECK(figure(r.out, "builds") == 16 && figure(r.out, "disk_writes") == 16 && figure(r.out, "disk_hits") == 0);
    CHECK(figure(r.out, "native_logs") == 0);
    run_ze(&r, env, "distinct", "16", "16");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 16);
    CHECK(figure(r.out, "disk_hits") == 16 && figure(r.out, "from_disk") == 16);
    CHECK(figure(r.out, "builds") == 0 && figure(r.out, "disk_writes") == 0);
    CHECK(figure(r.out, "native_logs") == 16);
    return 0;
}

/* Without the lock the same start-up crashes in the simulator's compiler:
 * what the serialization above prevents. */
static int ze_async_compile_unserialized_aborts(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILER_RACE=abort", "CGSIM_COMPILE_MS=50", "CALLGUARD_SERIALIZE", fresh_cache("c"),
                         NULL};
    cgtest_result r;
    run_ze(&r, env, "distinct", "16", "16");
    CHECK(WIFSIGNALED(r.status) && WTERMSIG(r.status) == SIGABRT);
    return 0;
}

/* The same kernel asked by 16 threads at once is built once; the 15 others
 * wait for that load and share its module. */
static int ze_same_kernel_16_threads_loaded_once(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=200", "CGSIM_COMPILER_RACE=abort", fresh_cache("c"), NULL};
    cgtest_result r;
    run_ze(&r, env, "same", "16", "16");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 16);
    CHECK(figure(r.out, "builds") == 1);
    CHECK(figure(r.out, "memory_hits") == 15 && figure(r.out, "from_memory") == 15);
    CHECK(figure(r.out, "waits") >= 1);
    CHECK(figure(r.out, "distinct_modules") == 1);
    return 0;
}

/* A corrupted entry (a flipped byte) and a truncated one are detected,
 * reported once each, rebuilt and replaced: the next process hits all. */
static int ze_corrupt_cache_entry_is_rebuilt_and_replaced(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {SERIALIZED, fresh_cache("c"), NULL};
    cgtest_result second;
    return two_damaged_entries_are_rebuilt(run_ze, env, "distinct", &second);
}

/* A cache directory that cannot be made (a file stands where it should be)
 * degrades the cache, never the program: every kernel loads, one line says
 * so. */
static int ze_unwritable_cache_dir_degrades_to_memory(int argc, char **argv)
{
    (void)argc, (void)argv;
    char file[400], var[450];
    snprintf(file, sizeof file, "%s/plainfile", cgtest_tmpdir());
    FILE *f = fopen(file, "w");
    CHECK(f);
    fclose(f);
    snprintf(var, sizeof var, "CALLGUARD_CACHE_DIR=%s/sub", file);
    const char *env[] = {SERIALIZED, var, NULL};
    cgtest_result r;
    run_ze(&r, env, "distinct", "4", "8");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 8 && figure(r.out, "builds") == 8);
    CHECK(figure(r.out, "write_failures") == 8 && figure(r.out, "disk_writes") == 0);
    CHECK(count_lines(r.err, "module cache: cannot write") == 1);
    return 0;
}

/* The size limit: past it the least recently used entries go. */
static int ze_cache_size_limit_evicts_least_recently_used(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), "CALLGUARD_CACHE_SIZE=2K", NULL};
    char dir[400];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "16");
    CHECK(exited_ok(&r) && figure(r.out, "loaded") == 16);
    CHECK(figure(r.out, "evictions") > 0);
    char names[32][700];
    int n = entries(dir, names, 32);
    long long total = 0;
    for (int i = 0; i < n; i++) {
        struct stat st;
        CHECK(stat(names[i], &st) == 0);
        total += st.st_size;
    }
    CHECKF(total <= 2048 && n > 0 && n < 16, "%d entries, %lld bytes", n, total);
    /* one thread loaded in order: the entries left are the last kernels'
     * (the most recently used), so loading the last first hits them all */
    run_ze(&r, env, "reverse", "1", "16");
    CHECK(exited_ok(&r));
    CHECKF(figure(r.out, "disk_hits") == n, "hits %lld of %d entries", figure(r.out, "disk_hits"), n);
    return 0;
}

/* A kernel that spills more than the limit is rebuilt with the large
 * register file; the simulator spills as much, so the first module is kept
 * (with its flags) and the second destroyed. Spills are in CUDA's units:
 * 4096 bytes / (4 x SIMD 32). */
static int ze_spilling_kernel_retried_with_large_grf(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    cgtest_result r;
    run_ze(&r, env, "spill", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "retries") == 1 && figure(r.out, "builds") == 2 && figure(r.out, "retried") == 1);
    CHECK(figure(r.out, "spills") == 32 && figure(r.out, "simd") == 32 && figure(r.out, "max_threads") == 1024);
    CHECK(strstr(r.out, "flags=-cl-intel-greater-than-4GB-buffer-required\n"));
    CHECK(figure(r.out, "regs") == 0); /* the flags name no GRF mode */
    return 0;
}

/* A failed build: the status, the call, the driver's result and its build
 * log reach the caller; the large-GRF retry ran and failed too. */
static int ze_failed_build_reports_call_result_and_log(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    cgtest_result r;
    run_ze(&r, env, "badspirv", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_LOAD_EDRIVER call=zeModuleCreate result=0x70000004 retried=1"));
    CHECK(strstr(r.out, "error_log=") && !strstr(r.out, "error_log=-"));
    CHECK(figure(r.out, "builds") == 2);
    CHECK(figure(r.out, "disk_writes") == 0);
    return 0;
}

/* A kernel that needs 200 registers per thread (the simulator's grf=200)
 * runs out of resources in the default GRF mode: the large-GRF retry builds
 * it, and its flags (with -cl-intel-256-GRF-per-thread) and 256 registers
 * are the answer; a second process loads that build from disk. */
static int ze_out_of_registers_build_retried_with_large_grf(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    cgtest_result r;
    run_ze(&r, env, "needregs", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 1 && figure(r.out, "retried") == 1 && figure(r.out, "regs") == 256);
    CHECK(figure(r.out, "builds") == 2 && figure(r.out, "retries") == 1 && figure(r.out, "disk_writes") == 1);
    CHECK(strstr(r.out, "flags=-cl-intel-greater-than-4GB-buffer-required -cl-intel-256-GRF-per-thread\n"));
    run_ze(&r, env, "needregs", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 1 && figure(r.out, "from_disk") == 1 && figure(r.out, "builds") == 0);
    CHECK(figure(r.out, "regs") == 256 && strstr(r.out, "-cl-intel-256-GRF-per-thread\n"));
    return 0;
}

/* Out of registers in both GRF modes (grf=300): the retry's failure is the
 * answer, CG_LOAD_ERESOURCES with the driver's result and the retry's build
 * log naming the kernel. Flags that choose a GRF mode (128) get no retry. */
static int ze_out_of_registers_in_every_grf_mode_is_eresources(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    cgtest_result r;
    run_ze(&r, env, "regs300", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_LOAD_ERESOURCES call=zeModuleCreate result=0x70000003 retried=1 oor=1"));
    CHECK(strstr(r.out, "error_log=error: kernel fat needs 300 registers per thread; the GRF mode of this build "
                        "gives 256"));
    CHECK(figure(r.out, "builds") == 2 && figure(r.out, "retries") == 1 && figure(r.out, "disk_writes") == 0);
    run_ze(&r, env, "regs128", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_LOAD_ERESOURCES call=zeModuleCreate result=0x70000003 retried=0 oor=1"));
    CHECK(strstr(r.out, "needs 200 registers per thread; the GRF mode of this build gives 128"));
    CHECK(figure(r.out, "builds") == 1 && figure(r.out, "retries") == 0);
    return 0;
}

/* More shared local memory than the device has (slm=131072 of 64 KiB):
 * zeKernelCreate runs out of resources, the retry too, CG_LOAD_ERESOURCES
 * names zeKernelCreate and nothing stays loaded or cached; 32 KiB loads and
 * is reported as local_bytes. */
static int ze_kernel_create_out_of_shared_memory_is_eresources(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    cgtest_result r;
    run_ze(&r, env, "bigslm", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_LOAD_ERESOURCES call=zeKernelCreate result=0x70000003 retried=1 oor=1"));
    CHECK(figure(r.out, "builds") == 2 && figure(r.out, "disk_writes") == 0);
    run_ze(&r, env, "slm", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 1 && figure(r.out, "local") == 32768 && figure(r.out, "retried") == 0);
    return 0;
}

/* A kernel name the module lacks: CG_ENOENT naming the kernels it has. */
static int ze_unknown_kernel_name_lists_the_module_kernels(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    cgtest_result r;
    run_ze(&r, env, "badname", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_ENOENT call=zeModuleGetKernelNames"));
    CHECK(strstr(r.out, "kernel 'missing' is not in the module; it has: k0"));
    return 0;
}

static int read_file(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return 0;
}

/* Four processes fill one cold cache directory at once (with and without a
 * size limit that makes them evict while the others write): every kernel
 * loads in each, no entry is ever seen corrupt, and a fifth process finds
 * whole entries. */
static int ze_processes_share_the_cache_directory(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *limits[] = {"CALLGUARD_CACHE_SIZE=1G", "CALLGUARD_CACHE_SIZE=3K"};
    for (int l = 0; l < 2; l++) {
        char name[16];
        snprintf(name, sizeof name, "shared%d", l);
        const char *env[] = {"CGSIM_COMPILE_MS=5", fresh_cache(name), limits[l], NULL};
        char script[1024];
        snprintf(script, sizeof script,
                 "for i in 1 2 3 4; do \"$CG_LOAD_WORKER_ZE\" distinct 4 16 > %s/%s-out$i 2>&1 & done; wait",
                 cgtest_tmpdir(), name);
        const char *sh[] = {"/bin/sh", "-c", script, NULL};
        cgtest_result r;
        cgtest_run(&r, env, sh);
        CHECK(exited_ok(&r));
        for (int i = 1; i <= 4; i++) {
            char path[600], out[8192];
            snprintf(path, sizeof path, "%s/%s-out%d", cgtest_tmpdir(), name, i);
            CHECK(read_file(path, out, sizeof out) == 0);
            fprintf(stderr, "--- process %d (%s)\n%s", i, limits[l], out);
            CHECK(figure(out, "loaded") == 16 && figure(out, "corrupt") == 0 && figure(out, "write_failures") == 0);
            CHECK(!strstr(out, "is corrupt"));
        }
        run_ze(&r, env, "reverse", "1", "16");
        CHECK(exited_ok(&r) && figure(r.out, "loaded") == 16 && figure(r.out, "corrupt") == 0);
        CHECK(figure(r.out, "disk_hits") >= 1);
        if (l == 0) CHECK(figure(r.out, "disk_hits") == 16);
    }
    return 0;
}

/* The disk cache's key is the same before and after the driver opens its
 * compiler at its first compile (the simulator's libze_cgsim_compiler.so,
 * as NEO's libigc): a process that compiled a module of its own before its
 * first load finds the entries one that did not wrote, and the other way
 * round. */
static int ze_cache_key_is_the_same_before_and_after_the_first_compile(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *orders[][2] = {{"distinct", "compiled"}, {"compiled", "distinct"}};
    for (int o = 0; o < 2; o++) {
        char name[16];
        snprintf(name, sizeof name, "order%d", o);
        const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache(name), NULL};
        cgtest_result r;
        run_ze(&r, env, orders[o][0], "1", "4");
        CHECK(exited_ok(&r) && figure(r.out, "loaded") == 4 && figure(r.out, "disk_writes") == 4);
        run_ze(&r, env, orders[o][1], "1", "4");
        CHECK(exited_ok(&r) && figure(r.out, "loaded") == 4);
        CHECKF(figure(r.out, "disk_hits") == 4 && figure(r.out, "builds") == 0, "%s after %s: %lld disk hits of 4",
               orders[o][1], orders[o][0], figure(r.out, "disk_hits"));
    }
    return 0;
}

/* A bad cache setting is refused by name. */
static int ze_bad_cache_setting_is_named(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), "CALLGUARD_CACHE_SIZE=12X", NULL};
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_EINVAL"));
    CHECK(strstr(r.out, "CALLGUARD_CACHE_SIZE=12X: expected a size in bytes"));
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"ze_async_compile_loads_every_kernel_then_second_process_hits_disk",
     ze_async_compile_loads_every_kernel_then_second_process_hits_disk},
    {"ze_async_compile_unserialized_aborts", ze_async_compile_unserialized_aborts},
    {"ze_same_kernel_16_threads_loaded_once", ze_same_kernel_16_threads_loaded_once},
    {"ze_corrupt_cache_entry_is_rebuilt_and_replaced", ze_corrupt_cache_entry_is_rebuilt_and_replaced},
    {"ze_unwritable_cache_dir_degrades_to_memory", ze_unwritable_cache_dir_degrades_to_memory},
    {"ze_cache_size_limit_evicts_least_recently_used", ze_cache_size_limit_evicts_least_recently_used},
    {"ze_spilling_kernel_retried_with_large_grf", ze_spilling_kernel_retried_with_large_grf},
    {"ze_failed_build_reports_call_result_and_log", ze_failed_build_reports_call_result_and_log},
    {"ze_unknown_kernel_name_lists_the_module_kernels", ze_unknown_kernel_name_lists_the_module_kernels},
    {"ze_out_of_registers_build_retried_with_large_grf", ze_out_of_registers_build_retried_with_large_grf},
    {"ze_out_of_registers_in_every_grf_mode_is_eresources", ze_out_of_registers_in_every_grf_mode_is_eresources},
    {"ze_kernel_create_out_of_shared_memory_is_eresources", ze_kernel_create_out_of_shared_memory_is_eresources},
    {"ze_bad_cache_setting_is_named", ze_bad_cache_setting_is_named},
    {"ze_cache_key_is_the_same_before_and_after_the_first_compile",
     ze_cache_key_is_the_same_before_and_after_the_first_compile},
    {"ze_processes_share_the_cache_directory", ze_processes_share_the_cache_directory},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
