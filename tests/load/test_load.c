/* cg_load_binary and the module cache, each behaviour in fresh processes of
 * a worker program (worker_ze.c, worker_cl.c, worker_cuda.c) that prints its
 * figures as key=value; paths come from the environment ctest sets. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cgtest.h"

/* The value of key=... in text (0 if absent); -1 when the key is missing. */
static long long figure(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", key);
    for (const char *p = text; (p = strstr(p, pat)) != NULL; p++)
        if (p == text || p[-1] == ' ' || p[-1] == '\n') return atoll(p + strlen(pat));
    return -1;
}

static int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

static int exited_ok(const cgtest_result *r) { return WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0; }

static const char *worker(const char *var)
{
    const char *w = getenv(var);
    if (!w) {
        fprintf(stderr, "%s is not set (ctest sets it)\n", var);
        exit(2);
    }
    return w;
}

static char cache_env[512];

/* A fresh cache directory for this test. */
static const char *fresh_cache(const char *name)
{
    snprintf(cache_env, sizeof cache_env, "CALLGUARD_CACHE_DIR=%s/%s", cgtest_tmpdir(), name);
    return cache_env;
}

static int run_ze(cgtest_result *r, const char *const *env, const char *mode, const char *threads, const char *kernels)
{
    const char *argv[] = {worker("CG_LOAD_WORKER_ZE"), mode, threads, kernels, NULL};
    cgtest_run(r, env, argv);
    fprintf(stderr, "--- %s %s %s\n%s%s", mode, threads, kernels, r->out, r->err);
    return 0;
}

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

static int entries(const char *dir, char names[][700], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d)) != NULL;)
        if (de->d_name[0] != '.' && n < max) snprintf(names[n++], 700, "%s/%s", dir, de->d_name);
    if (d) closedir(d);
    return n;
}

/* A corrupted entry (a flipped byte) and a truncated one are detected,
 * reported once each, rebuilt and replaced: the next process hits all. */
static int ze_corrupt_cache_entry_is_rebuilt_and_replaced(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {SERIALIZED, fresh_cache("c"), NULL};
    char dir[400];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    cgtest_result r;
    run_ze(&r, env, "distinct", "4", "4");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 4);
    char names[8][700];
    CHECK(entries(dir, names, 8) == 4);
    /* flip a byte of the payload's end in one, truncate another */
    int fd = open(names[0], O_RDWR);
    CHECK(fd >= 0);
    off_t end = lseek(fd, 0, SEEK_END);
    char c;
    CHECK(pread(fd, &c, 1, end - 2) == 1);
    c ^= 0x5a;
    CHECK(pwrite(fd, &c, 1, end - 2) == 1);
    close(fd);
    CHECK(truncate(names[1], 40) == 0);
    run_ze(&r, env, "distinct", "4", "4");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 4);
    CHECK(figure(r.out, "corrupt") == 2 && figure(r.out, "builds") == 2 && figure(r.out, "disk_hits") == 2);
    CHECK(count_lines(r.err, "is corrupt") == 2);
    CHECK(figure(r.out, "disk_writes") == 2);
    run_ze(&r, env, "distinct", "4", "4");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "disk_hits") == 4 && figure(r.out, "corrupt") == 0 && figure(r.out, "builds") == 0);
    return 0;
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

static int run_cl(cgtest_result *r, const char *const *env, const char *mode, const char *threads, const char *kernels)
{
    const char *argv[] = {worker("CG_LOAD_WORKER_CL"), mode, threads, kernels, NULL};
    cgtest_run(r, env, argv);
    fprintf(stderr, "--- %s %s %s\n%s%s", mode, threads, kernels, r->out, r->err);
    return 0;
}

/* OpenCL on PoCL: 4 threads build 8 kernels from source through the layer
 * (clBuildProgram serialized); a second process loads each from the disk
 * cache's CL_PROGRAM_BINARIES; the kernels are real (their argument count). */
static int cl_source_loads_then_second_process_loads_binaries_from_disk(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CALLGUARD_SERIALIZE=clBuildProgram", fresh_cache("c"), NULL};
    cgtest_result r;
    run_cl(&r, env, "source", "4", "8");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 8 && figure(r.out, "builds") == 8 && figure(r.out, "disk_writes") == 8);
    CHECK(figure(r.out, "nargs") == 1 && figure(r.out, "max_threads") > 0 && figure(r.out, "regs") == -1);
    CHECK(strstr(r.out, "flags=-cl-std=CL1.2\n"));
    run_cl(&r, env, "source", "4", "8");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 8 && figure(r.out, "from_disk") == 8);
    CHECK(figure(r.out, "builds") == 0 && figure(r.out, "disk_hits") == 8);
    return 0;
}

/* A program binary given as native input loads with clCreateProgramWithBinary. */
static int cl_program_binary_input_loads(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {fresh_cache("c"), NULL};
    cgtest_result r;
    run_cl(&r, env, "binary", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 1 && figure(r.out, "failed") == 0 && figure(r.out, "nargs") == 1);
    return 0;
}

/* A build failure returns clBuildProgram's error with PoCL's build log. */
static int cl_failed_build_reports_error_and_log(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {fresh_cache("c"), NULL};
    cgtest_result r;
    run_cl(&r, env, "badsource", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_LOAD_EDRIVER call=clBuildProgram result=-11"));
    CHECK(figure(r.out, "error_log_bytes") > 0);
    run_cl(&r, env, "badname", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_ENOENT call=clCreateKernel"));
    CHECK(strstr(r.out, "kernel 'missing' is not in the program; it has: k0"));
    return 0;
}

/* Intel's CPU OpenCL runtime (PyPI intel-opencl-rt, put in build-venv/ by
 * scripts/setup-venv.sh): its .icd is written here with the library's
 * absolute path (the wheel's point at a build machine's prefix) and
 * OCL_ICD_VENDORS points at it. Returns NULL with *skip set when the
 * runtime is not there: 77 (skip) where no build-venv was made at all, 1
 * (fail) where setup should have put it there. */
static char intel_vendors[512];
static const char *intel_ocl_env(int *skip)
{
    const char *lib = getenv("CG_INTEL_OCL");
    const char *venv = getenv("CG_INTEL_OCL_VENV");
    const char *spirv = getenv("CG_LOAD_SPIRV_DIR");
    if (!spirv || !*spirv) {
        fprintf(stderr, "FAIL: no SPIR-V was made at build time: clang-14 and llvm-spirv-14 (scripts/setup-debian.sh) "
                        "were not found when CMake ran\n");
        *skip = 1;
        return NULL;
    }
    if (!lib || access(lib, R_OK) != 0) {
        struct stat st;
        if (venv && *venv && stat(venv, &st) != 0) {
            fprintf(stderr, "SKIP: no %s (Intel's CPU OpenCL runtime): %s does not exist; run scripts/setup-venv.sh\n",
                    lib ? lib : "CG_INTEL_OCL", venv);
            *skip = 77;
        } else {
            fprintf(stderr, "FAIL: %s (Intel's CPU OpenCL runtime) is missing%s%s: scripts/setup-venv.sh installs it "
                            "(PyPI intel-opencl-rt), -DCALLGUARD_INTEL_OCL=PATH names another\n",
                    lib ? lib : "CG_INTEL_OCL", venv && *venv ? " though there is " : "", venv ? venv : "");
            *skip = 1;
        }
        return NULL;
    }
    char dir[450], icd[500];
    snprintf(dir, sizeof dir, "%s/intel-icd", cgtest_tmpdir());
    snprintf(icd, sizeof icd, "%s/intel-cpu.icd", dir);
    FILE *f;
    if (mkdir(dir, 0700) != 0 || !(f = fopen(icd, "w"))) {
        perror(dir);
        *skip = 1;
        return NULL;
    }
    fprintf(f, "%s\n", lib);
    fclose(f);
    snprintf(intel_vendors, sizeof intel_vendors, "OCL_ICD_VENDORS=%s", dir);
    return intel_vendors;
}

#define INTEL_OCL_ENV()                                                                                                \
    int skip_ = 0;                                                                                                     \
    const char *vendors = intel_ocl_env(&skip_);                                                                       \
    if (!vendors) return skip_

/* The OpenCL IL path on Intel's CPU runtime: 16 threads load 16 distinct
 * kernels from real SPIR-V (clCreateProgramWithIL) with clBuildProgram
 * serialized through the layer: each loads, with the runtime's build log and
 * its CL_KERNEL_* figures, and runs; a second process loads all 16 from the
 * disk cache's CL_PROGRAM_BINARIES (no build) and they run too. */
static int cl_il_intel_loads_every_kernel_then_second_process_loads_binaries_from_disk(int argc, char **argv)
{
    (void)argc, (void)argv;
    INTEL_OCL_ENV();
    const char *env[] = {vendors, "CALLGUARD_SERIALIZE=clBuildProgram", "CG_LOAD_RUN=1", fresh_cache("c"), NULL};
    cgtest_result r;
    run_cl(&r, env, "il", "16", "16");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 16 && figure(r.out, "failed") == 0);
    CHECK(figure(r.out, "builds") == 16 && figure(r.out, "disk_writes") == 16 && figure(r.out, "disk_hits") == 0);
    CHECK(figure(r.out, "max_threads") > 0 && figure(r.out, "simd") > 0 && figure(r.out, "nargs") == 1);
    CHECK(figure(r.out, "regs") == -1 && figure(r.out, "spills") == -1);
    CHECK(strstr(r.out, "flags=-cl-mad-enable\n"));
    CHECK(figure(r.out, "log_bytes") > 0);
    CHECK(figure(r.out, "ran") == 1);
    run_cl(&r, env, "il", "16", "16");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 16 && figure(r.out, "from_disk") == 16);
    CHECK(figure(r.out, "builds") == 0 && figure(r.out, "disk_hits") == 16 && figure(r.out, "disk_writes") == 0);
    CHECK(figure(r.out, "max_threads") > 0 && figure(r.out, "ran") == 1);
    return 0;
}

/* Unserialized, Intel's compiler takes 16 threads building at once (no lock
 * needed there, unlike IGC 2.38's on Level Zero): every kernel loads and runs. */
static int cl_il_intel_unserialized_16_threads_all_load(int argc, char **argv)
{
    (void)argc, (void)argv;
    INTEL_OCL_ENV();
    const char *env[] = {vendors, "CALLGUARD_SERIALIZE", "CG_LOAD_RUN=1", fresh_cache("c"), NULL};
    cgtest_result r;
    run_cl(&r, env, "il", "16", "16");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 16 && figure(r.out, "failed") == 0 && figure(r.out, "builds") == 16);
    CHECK(figure(r.out, "ran") == 1);
    return 0;
}

/* The same SPIR-V kernel asked by 16 threads at once is built once. */
static int cl_il_intel_same_kernel_16_threads_loaded_once(int argc, char **argv)
{
    (void)argc, (void)argv;
    INTEL_OCL_ENV();
    const char *env[] = {vendors, fresh_cache("c"), NULL};
    cgtest_result r;
    run_cl(&r, env, "sameil", "16", "16");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 16 && figure(r.out, "builds") == 1);
    CHECK(figure(r.out, "memory_hits") == 15 && figure(r.out, "from_memory") == 15 && figure(r.out, "waits") >= 1);
    return 0;
}

/* Flips a byte near the end of the first entry of DIR and truncates the
 * second; returns 0 when both were done. */
static int corrupt_two_entries(const char *dir)
{
    char names[8][700];
    if (entries(dir, names, 8) < 2) return -1;
    int fd = open(names[0], O_RDWR);
    if (fd < 0) return -1;
    off_t end = lseek(fd, 0, SEEK_END);
    char c;
    int ok = pread(fd, &c, 1, end - 2) == 1 && (c ^= 0x5a, pwrite(fd, &c, 1, end - 2) == 1);
    close(fd);
    return ok && truncate(names[1], 40) == 0 ? 0 : -1;
}

/* A corrupted and a truncated entry of Intel's program binaries are
 * reported, rebuilt from the SPIR-V and replaced; the next process hits all. */
static int cl_il_intel_corrupt_cache_entry_is_rebuilt_and_replaced(int argc, char **argv)
{
    (void)argc, (void)argv;
    INTEL_OCL_ENV();
    const char *env[] = {vendors, "CG_LOAD_RUN=1", fresh_cache("c"), NULL};
    char dir[400];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    cgtest_result r;
    run_cl(&r, env, "il", "4", "4");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 4);
    CHECK(corrupt_two_entries(dir) == 0);
    run_cl(&r, env, "il", "4", "4");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "loaded") == 4 && figure(r.out, "ran") == 1);
    CHECK(figure(r.out, "corrupt") == 2 && figure(r.out, "builds") == 2 && figure(r.out, "disk_hits") == 2);
    CHECK(count_lines(r.err, "is corrupt") == 2);
    CHECK(figure(r.out, "disk_writes") == 2);
    run_cl(&r, env, "il", "4", "4");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "disk_hits") == 4 && figure(r.out, "corrupt") == 0 && figure(r.out, "builds") == 0);
    return 0;
}

/* Bytes that are no SPIR-V fail in clCreateProgramWithIL; a build option
 * the runtime does not know fails in clBuildProgram with its build log. */
static int cl_il_intel_bad_il_and_bad_option_report_call_and_log(int argc, char **argv)
{
    (void)argc, (void)argv;
    INTEL_OCL_ENV();
    const char *env[] = {vendors, fresh_cache("c"), NULL};
    cgtest_result r;
    run_cl(&r, env, "badil", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_LOAD_EDRIVER call=clCreateProgramWithIL result=-30")); /* CL_INVALID_VALUE */
    run_cl(&r, env, "badflags", "1", "1");
    CHECK(exited_ok(&r));
    CHECK(strstr(r.out, "error=CG_LOAD_EDRIVER call=clBuildProgram result=-43")); /* CL_INVALID_BUILD_OPTIONS */
    CHECK(figure(r.out, "error_log_bytes") > 0);
    CHECK(figure(r.out, "disk_writes") == 0);
    return 0;
}

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
    {"cl_source_loads_then_second_process_loads_binaries_from_disk",
     cl_source_loads_then_second_process_loads_binaries_from_disk},
    {"cl_program_binary_input_loads", cl_program_binary_input_loads},
    {"cl_failed_build_reports_error_and_log", cl_failed_build_reports_error_and_log},
    {"cl_il_intel_loads_every_kernel_then_second_process_loads_binaries_from_disk",
     cl_il_intel_loads_every_kernel_then_second_process_loads_binaries_from_disk},
    {"cl_il_intel_unserialized_16_threads_all_load", cl_il_intel_unserialized_16_threads_all_load},
    {"cl_il_intel_same_kernel_16_threads_loaded_once", cl_il_intel_same_kernel_16_threads_loaded_once},
    {"cl_il_intel_corrupt_cache_entry_is_rebuilt_and_replaced", cl_il_intel_corrupt_cache_entry_is_rebuilt_and_replaced},
    {"cl_il_intel_bad_il_and_bad_option_report_call_and_log", cl_il_intel_bad_il_and_bad_option_report_call_and_log},
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
    {"ze_processes_share_the_cache_directory", ze_processes_share_the_cache_directory},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
