/* cg_load_binary on OpenCL: PoCL from source and from a program binary,
 * and the IL path on Intel's CPU runtime (real SPIR-V), through the layer
 * linked in libOpenCL's place. */
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
            fprintf(stderr,
                    "FAIL: %s (Intel's CPU OpenCL runtime) is missing%s%s: scripts/setup-venv.sh installs it "
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

/* A corrupted and a truncated entry of Intel's program binaries are
 * reported, rebuilt from the SPIR-V and replaced; the next process hits all. */
static int cl_il_intel_corrupt_cache_entry_is_rebuilt_and_replaced(int argc, char **argv)
{
    (void)argc, (void)argv;
    INTEL_OCL_ENV();
    const char *env[] = {vendors, "CG_LOAD_RUN=1", fresh_cache("c"), NULL};
    cgtest_result second;
    CHECK(two_damaged_entries_are_rebuilt(run_cl, env, "il", &second) == 0);
    CHECK(figure(second.out, "ran") == 1);
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

const cgtest_case cgtest_cases[] = {
    {"cl_source_loads_then_second_process_loads_binaries_from_disk",
     cl_source_loads_then_second_process_loads_binaries_from_disk},
    {"cl_program_binary_input_loads", cl_program_binary_input_loads},
    {"cl_failed_build_reports_error_and_log", cl_failed_build_reports_error_and_log},
    {"cl_il_intel_loads_every_kernel_then_second_process_loads_binaries_from_disk",
     cl_il_intel_loads_every_kernel_then_second_process_loads_binaries_from_disk},
    {"cl_il_intel_unserialized_16_threads_all_load", cl_il_intel_unserialized_16_threads_all_load},
    {"cl_il_intel_same_kernel_16_threads_loaded_once", cl_il_intel_same_kernel_16_threads_loaded_once},
    {"cl_il_intel_corrupt_cache_entry_is_rebuilt_and_replaced",
     cl_il_intel_corrupt_cache_entry_is_rebuilt_and_replaced},
    {"cl_il_intel_bad_il_and_bad_option_report_call_and_log", cl_il_intel_bad_il_and_bad_option_report_call_and_log},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
