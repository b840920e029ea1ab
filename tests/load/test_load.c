/* cg_load_binary and the module cache, each behaviour in fresh processes of
 * a worker program (worker_ze.c, worker_cl.c, worker_cuda.c) that prints its
 * figures as key=value; paths come from the environment ctest sets. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* ---- the cache's trust model (docs/security.md) ---- */

static int mode_is(const char *path, mode_t want)
{
    struct stat st;
    if (lstat(path, &st) != 0) return 0;
    if ((st.st_mode & 07777) != want) fprintf(stderr, "%s: mode %04o, expected %04o\n", path, st.st_mode & 07777, want);
    return (st.st_mode & 07777) == want;
}

/* The names in dir (dot files too), sorted, in one string. */
static void listing(const char *dir, char *out, size_t cap)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0)
            snprintf(out + strlen(out), cap - strlen(out), "%s ", names[i]->d_name);
        free(names[i]);
    }
    if (n >= 0) free(names);
}

static int touch(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* A cache callguard makes is its user's alone, whatever the umask (0, which
 * would leave everything open, and 0277, which would take the owner's own
 * bits): every folder it makes (a missing parent too) is 0700, entries 0600. */
static int ze_cache_folders_are_0700_and_entries_0600_whatever_the_umask(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const mode_t masks[] = {0, 0277};
    for (int m = 0; m < 2; m++) {
        char parent[300], top[350], dir[400], var[450];
        snprintf(parent, sizeof parent, "%s/made%d", cgtest_tmpdir(), m);
        snprintf(top, sizeof top, "%s/c", parent);
        snprintf(dir, sizeof dir, "%s/load-v1", top);
        snprintf(var, sizeof var, "CALLGUARD_CACHE_DIR=%s", top);
        const char *env[] = {"CGSIM_COMPILE_MS=0", var, NULL};
        cgtest_result r;
        mode_t old = umask(masks[m]);
        run_ze(&r, env, "distinct", "1", "2");
        umask(old);
        CHECKF(exited_ok(&r) && figure(r.out, "disk_writes") == 2, "umask %04o", masks[m]);
        CHECKF(mode_is(parent, 0700) && mode_is(top, 0700) && mode_is(dir, 0700), "umask %04o", masks[m]);
        char names[8][700];
        CHECK(entries(dir, names, 8) == 2);
        CHECKF(mode_is(names[0], 0600) && mode_is(names[1], 0600), "umask %04o", masks[m]);
    }
    return 0;
}

/* load-v1 is a symlink to another folder (a dataset): the disk cache is off
 * with one line naming it, and with CALLGUARD_CACHE_SIZE=0 nothing in the
 * folder it names is created or deleted. */
static int ze_symlinked_load_v1_is_refused_and_nothing_outside_is_touched(int argc, char **argv)
{
    (void)argc, (void)argv;
    char data[400], top[400], link[450], path[500], var[450], before[1024], after[1024];
    snprintf(data, sizeof data, "%s/dataset", cgtest_tmpdir());
    snprintf(top, sizeof top, "%s/c", cgtest_tmpdir());
    snprintf(link, sizeof link, "%s/load-v1", top);
    CHECK(mkdir(data, 0700) == 0 && mkdir(top, 0700) == 0 && symlink(data, link) == 0);
    snprintf(path, sizeof path, "%s/results.bin", data);
    CHECK(touch(path, "precious") == 0);
    snprintf(path, sizeof path, "%s/%s", data, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    CHECK(touch(path, "looks like an entry") == 0);
    listing(data, before, sizeof before);
    snprintf(var, sizeof var, "CALLGUARD_CACHE_DIR=%s", top);
    const char *env[] = {"CGSIM_COMPILE_MS=0", var, "CALLGUARD_CACHE_SIZE=0", NULL};
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "4");
    CHECK(exited_ok(&r) && figure(r.out, "loaded") == 4 && figure(r.out, "builds") == 4);
    CHECK(figure(r.out, "disk_writes") == 0 && figure(r.out, "evictions") == 0);
    listing(data, after, sizeof after);
    CHECKF(strcmp(before, after) == 0, "before: %s after: %s", before, after);
    CHECK(count_lines(r.err, "load-v1 is a symbolic link; the disk cache is off for this process") == 1);
    CHECK(strstr(r.out, "cache_dir=\n"));
    return 0;
}

/* Eviction removes only callguard's own names: with CALLGUARD_CACHE_SIZE=0
 * every entry but the newest goes, and an old temporary file of its own
 * pattern, but no other name in load-v1 (notes, 63 or 65 hex digits,
 * capitals, a .tmp- name of another pattern). */
static int ze_eviction_removes_only_callguards_own_names(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), "CALLGUARD_CACHE_SIZE=0", NULL};
    char dir[400], path[500];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "1");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 1);
    static const char *const foreign[] = {"notes.txt",
                                          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
                                          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0",
                                          "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF",
                                          ".tmp-notes",
                                          ".tmp-12-x"};
    struct timespec hour_ago[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, foreign[i]);
        CHECK(touch(path, "not callguard's: a few bytes more than nothing") == 0);
        CHECK(utimensat(AT_FDCWD, path, hour_ago, 0) == 0);
    }
    snprintf(path, sizeof path, "%s/.tmp-12-34", dir); /* a crashed writer's */
    CHECK(touch(path, "half an entry") == 0 && utimensat(AT_FDCWD, path, hour_ago, 0) == 0);
    run_ze(&r, env, "distinct", "1", "4");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 3 && figure(r.out, "evictions") == 3); /* k0 hit */
    for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, foreign[i]);
        CHECKF(access(path, F_OK) == 0, "%s was removed", foreign[i]);
    }
    snprintf(path, sizeof path, "%s/.tmp-12-34", dir);
    CHECK(access(path, F_OK) != 0);
    char names[16][700];
    CHECK(entries(dir, names, 16) == 1 + 4); /* the newest entry, and the foreign names not starting with '.' */
    return 0;
}

/* A cache folder, load-v1 or an entry writable by others than its owner is
 * not used: one line names it and why, every kernel is built, nothing is
 * read from or written to the disk cache. */
static int ze_cache_writable_by_others_is_not_used(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    char top[350], dir[400];
    snprintf(top, sizeof top, "%s/c", cgtest_tmpdir());
    snprintf(dir, sizeof dir, "%s/load-v1", top);
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "2");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 2);
    char names[8][700];
    CHECK(entries(dir, names, 8) == 2);
    struct {
        const char *path;
        mode_t mode;
        const char *said;
    } cases[] = {{top, 0777, "c is writable by others (mode 0777); the disk cache is off for this process"},
                 {dir, 0770, "load-v1 is writable by its group (mode 0770); the disk cache is off"},
                 {names[1], 0666, "is writable by others (mode 0666); the disk cache is off"}};
    for (int i = 0; i < 3; i++) {
        CHECK(chmod(cases[i].path, cases[i].mode) == 0);
        run_ze(&r, env, "distinct", "1", "2");
        CHECK(exited_ok(&r) && figure(r.out, "loaded") == 2);
        CHECK(figure(r.out, "disk_writes") == 0 && figure(r.out, "builds") >= 1);
        if (i < 2) CHECK(figure(r.out, "disk_hits") == 0 && figure(r.out, "builds") == 2);
        CHECK(count_lines(r.err, cases[i].said) == 1 && count_lines(r.err, "callguard:") == 1);
        CHECK(chmod(cases[i].path, i < 2 ? 0700 : 0600) == 0);
    }
    run_ze(&r, env, "distinct", "1", "2");
    CHECK(exited_ok(&r) && figure(r.out, "disk_hits") == 2 && !strstr(r.err, "callguard:"));
    return 0;
}

/* The only entry of a one-kernel run, in path. */
static int only_entry(const char *dir, char *path)
{
    char names[4][700];
    if (entries(dir, names, 4) != 1) return -1;
    snprintf(path, 700, "%s", names[0]);
    return 0;
}

/* An entry whose lengths wrap past 2^64 to the file's size (flags longer
 * than the file, payload 2^64 - 16) is corrupt: reported and rebuilt, no
 * crash. */
static int ze_entry_with_wrapping_lengths_is_corrupt_not_a_crash(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    char dir[400], path[700];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "1");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 1 && only_entry(dir, path) == 0);
    int fd = open(path, O_RDWR);
    unsigned char h[24];
    CHECK(fd >= 0 && pread(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
    uint32_t fl = 0;
    uint64_t pl = 0;
    for (int i = 0; i < 4; i++)
        fl |= (uint32_t)h[12 + i] << (8 * i);
    for (int i = 0; i < 8; i++)
        pl |= (uint64_t)h[16 + i] << (8 * i);
    uint64_t shift = pl + 16; /* flags longer by this, payload shorter by it: the sum is unchanged */
    fl += (uint32_t)shift;
    pl -= shift;
    for (int i = 0; i < 4; i++)
        h[12 + i] = (unsigned char)(fl >> (8 * i));
    for (int i = 0; i < 8; i++)
        h[16 + i] = (unsigned char)(pl >> (8 * i));
    CHECK(pwrite(fd, h, sizeof h, 0) == (ssize_t)sizeof h);
    close(fd);
    run_ze(&r, env, "distinct", "1", "1");
    CHECK(exited_ok(&r) && figure(r.out, "loaded") == 1);
    CHECK(figure(r.out, "corrupt") == 1 && figure(r.out, "builds") == 1 && figure(r.out, "disk_writes") == 1);
    CHECK(count_lines(r.err, "is corrupt (truncated or padded: its lengths do not add up)") == 1);
    return 0;
}

/* A FIFO at an entry's name: the load does not wait for a writer (the
 * worker is killed after 60 s if it does); the FIFO is reported as no
 * regular file and replaced by the rebuilt entry. */
static int ze_fifo_at_an_entry_name_does_not_block_the_load(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    char dir[400], path[700];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "1");
    CHECK(exited_ok(&r) && only_entry(dir, path) == 0);
    CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
    const char *argv2[] = {"/usr/bin/timeout", "-s", "KILL", "60", worker("CG_LOAD_WORKER_ZE"),
                           "distinct",         "1",  "1",    NULL};
    cgtest_run(&r, env, argv2);
    fprintf(stderr, "--- distinct 1 1 (FIFO at the entry)\n%s%s", r.out, r.err);
    CHECKF(exited_ok(&r), "wait status 0x%x (9: killed after 60 s, blocked on the FIFO)", r.status);
    CHECK(figure(r.out, "loaded") == 1 && figure(r.out, "corrupt") == 1 && figure(r.out, "builds") == 1);
    CHECK(count_lines(r.err, "is corrupt (not a regular file)") == 1);
    struct stat st;
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    return 0;
}

/* A 2 GiB garbage file (sparse) at an entry's name is refused after its
 * 56-byte header: the process reads no more than a run that found no entry
 * (/proc/self/io's rchar, give or take 1 MiB), the kernel loads, the file
 * is replaced. */
static int ze_huge_garbage_entry_is_refused_after_its_header(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    char dir[400], path[700];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "1");
    long long cold = figure(r.out, "rchar");
    CHECK(exited_ok(&r) && cold > 0 && only_entry(dir, path) == 0);
    int fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && write(fd, "garbage", 7) == 7 && ftruncate(fd, 2LL << 30) == 0);
    close(fd);
    run_ze(&r, env, "distinct", "1", "1");
    long long read_ = figure(r.out, "rchar");
    struct stat st;
    int replaced = stat(path, &st) == 0 && st.st_size < 4096;
    if (!replaced) unlink(path);
    CHECK(exited_ok(&r) && figure(r.out, "loaded") == 1);
    CHECK(figure(r.out, "corrupt") == 1 && figure(r.out, "builds") == 1);
    CHECK(count_lines(r.err, "is corrupt (bad magic)") == 1);
    CHECKF(read_ < cold + (1 << 20), "read %lld bytes, a run without the entry %lld", read_, cold);
    CHECK(replaced);
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
    {"cl_il_intel_corrupt_cache_entry_is_rebuilt_and_replaced",
     cl_il_intel_corrupt_cache_entry_is_rebuilt_and_replaced},
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
    {"ze_cache_folders_are_0700_and_entries_0600_whatever_the_umask",
     ze_cache_folders_are_0700_and_entries_0600_whatever_the_umask},
    {"ze_symlinked_load_v1_is_refused_and_nothing_outside_is_touched",
     ze_symlinked_load_v1_is_refused_and_nothing_outside_is_touched},
    {"ze_eviction_removes_only_callguards_own_names", ze_eviction_removes_only_callguards_own_names},
    {"ze_cache_writable_by_others_is_not_used", ze_cache_writable_by_others_is_not_used},
    {"ze_entry_with_wrapping_lengths_is_corrupt_not_a_crash", ze_entry_with_wrapping_lengths_is_corrupt_not_a_crash},
    {"ze_fifo_at_an_entry_name_does_not_block_the_load", ze_fifo_at_an_entry_name_does_not_block_the_load},
    {"ze_huge_garbage_entry_is_refused_after_its_header", ze_huge_garbage_entry_is_refused_after_its_header},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
