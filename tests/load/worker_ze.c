/* Triton's async-compile pattern on the Level Zero simulator, in C: THREADS
 * threads (a thread pool's workers) load KERNELS kernels through
 * cg_load_binary, then one line of key=value figures is printed for the
 * test to check. Linked to libcallguard_ze.so in the loader's place, so the
 * loads go through the layer (CALLGUARD_SERIALIZE=zeModuleCreate).
 *
 * Usage: load_worker_ze MODE THREADS KERNELS
 *   distinct  kernel i is its own module "k<i>" (every kernel distinct)
 *   reverse   the same kernels, the last first
 *   same      every thread loads the same module at once
 *   spill     one kernel spilling 4096 bytes (the large-GRF retry)
 *   badspirv  bytes that are no SPIR-V (the build fails, with its log)
 *   badname   a kernel name the module lacks
 *   needregs  one kernel needing 200 registers per thread (grf=200): out of
 *             resources in the default GRF mode, built by the large-GRF retry
 *   regs128   the same with -cl-intel-128-GRF-per-thread in the flags (no retry)
 *   regs300   one needing 300: out of resources in both modes
 *   bigslm    one needing 128 KiB of shared local memory (the device has 64):
 *             zeKernelCreate runs out of resources
 *   slm       one needing 32 KiB of it: loads, local_bytes says so
 *   compiled  as distinct, after the program compiled a module of its own
 *             (zeModuleCreate): the simulator has opened its compiler
 *             library by then, as NEO has opened IGC after a first build
 *
 * Linked with absolute run paths and every library named, so that a setuid
 * copy of it runs (tests/privilege/test_cache_trust.py). */
#define _GNU_SOURCE
#include "callguard/load.h"

#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "../ze/ze_util.h"

static ze_sim sim;
static const char *mode;
static int nthreads, nkernels;
static atomic_int next, loaded, failed, native_logs, from_disk, from_memory;
static void *modules[256];
static pthread_barrier_t start;

static size_t module_bytes(int i, char *buf, size_t cap)
{
    memcpy(buf, "\x03\x02\x23\x07", 4);
    int n;
    if (strcmp(mode, "spill") == 0)
        n = snprintf(buf + 4, cap - 4, "big:args=1:spill=4096:private=128");
    else if (strcmp(mode, "same") == 0)
        n = snprintf(buf + 4, cap - 4, "shared:args=2");
    else if (strcmp(mode, "needregs") == 0 || strcmp(mode, "regs128") == 0)
        n = snprintf(buf + 4, cap - 4, "fat:args=1:grf=200");
    else if (strcmp(mode, "regs300") == 0)
        n = snprintf(buf + 4, cap - 4, "fat:args=1:grf=300");
    else if (strcmp(mode, "bigslm") == 0)
        n = snprintf(buf + 4, cap - 4, "fat:args=1:slm=131072");
    else if (strcmp(mode, "slm") == 0)
        n = snprintf(buf + 4, cap - 4, "fat:args=1:slm=32768");
    else
        n = snprintf(buf + 4, cap - 4, "k%d:args=%d", i, 1 + i % 3);
    return 4 + (size_t)n + 1; /* the spec's NUL */
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (int i; (i = atomic_fetch_add(&next, 1)) < nkernels;) {
        if (strcmp(mode, "reverse") == 0) i = nkernels - 1 - i;
        char bytes[128], name[32];
        size_t size = module_bytes(i, bytes, sizeof bytes);
        if (strcmp(mode, "badspirv") == 0) memcpy(bytes, "nope", 4);
        if (strcmp(mode, "spill") == 0)
            snprintf(name, sizeof name, "big");
        else if (strcmp(mode, "same") == 0)
            snprintf(name, sizeof name, "shared");
        else if (strcmp(mode, "badname") == 0)
            snprintf(name, sizeof name, "missing");
        else if (strstr("needregs regs128 regs300 bigslm slm", mode))
            snprintf(name, sizeof name, "fat");
        else
            snprintf(name, sizeof name, "k%d", i);
        cg_load_request req = {.api = CG_LOAD_API_ZE,
                               .context = sim.context,
                               .device = sim.device,
                               .bytes = bytes,
                               .size = size,
                               .format = CG_LOAD_FORMAT_IL,
                               .kernel_name = name,
                               .build_flags =
                                   strcmp(mode, "regs128") == 0
                                       ? "-cl-intel-greater-than-4GB-buffer-required -cl-intel-128-GRF-per-thread"
                                       : "-cl-intel-greater-than-4GB-buffer-required"};
        cg_load_result *r = NULL;
        int rc = cg_load_binary(&req, &r);
        if (rc != CG_OK) {
            atomic_fetch_add(&failed, 1);
            printf("error=%s call=%s result=0x%lx retried=%d oor=%d message=%s\n", cg_load_status_name(rc),
                   r && r->failed_call ? r->failed_call : "-", r ? (unsigned long)r->api_result : 0ul,
                   r ? r->retried : -1, r ? r->out_of_resources : -1, r ? r->message : "-");
            printf("error_log=%s\n", r && r->build_log[0] ? strtok(r->build_log, "\n") : "-");
        } else {
            atomic_fetch_add(&loaded, 1);
            if (strstr(r->build_log, "from a native binary")) atomic_fetch_add(&native_logs, 1);
            if (r->source == CG_LOAD_SOURCE_DISK) atomic_fetch_add(&from_disk, 1);
            if (r->source == CG_LOAD_SOURCE_MEMORY) atomic_fetch_add(&from_memory, 1);
            modules[i] = r->module;
            /* the kernel is usable */
            ZE_OK(zeKernelSetArgumentValue(r->kernel, 0, sizeof(int), &i));
            if (i == 0)
                printf("regs=%d spills=%d max_threads=%d simd=%d retried=%d local=%lld flags=%s\n", r->n_regs,
                       r->n_spills, r->max_threads, r->simd_width, r->retried, r->local_bytes, r->build_flags);
        }
        cg_load_result_free(r);
    }
    return NULL;
}

/* What this process read with read() and its kin so far (/proc/self/io's
 * rchar): a cache entry read whole shows here. -1 when unknown. */
static long long bytes_read(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    long long n = -1;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "rchar: %lld", &n) == 1) break;
    if (f) fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: load_worker_ze MODE THREADS KERNELS\n");
        return 2;
    }
    mode = argv[1];
    nthreads = atoi(argv[2]);
    nkernels = atoi(argv[3]);
    if (nthreads < 1 || nthreads > 256 || nkernels < 1 || nkernels > 256) return 2;
    setvbuf(stdout, NULL, _IOLBF, 0);
    sim = ze_sim_open();
    if (strcmp(mode, "compiled") == 0) {
        ze_module_handle_t own;
        ZE_OK(ze_sim_compile(&sim, &own));
        ZE_OK(zeModuleDestroy(own));
    }
    pthread_t t[256];
    pthread_barrier_init(&start, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    int distinct = 0;
    for (int i = 0; i < nkernels; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= modules[j] == modules[i];
        distinct += modules[i] && !seen;
    }
    cg_load_stats s;
    cg_load_get_stats(&s);
    printf("loaded=%d failed=%d distinct_modules=%d native_logs=%d from_disk=%d from_memory=%d\n", atomic_load(&loaded),
           atomic_load(&failed), distinct, atomic_load(&native_logs), atomic_load(&from_disk),
           atomic_load(&from_memory));
    printf("requests=%llu builds=%llu disk_hits=%llu memory_hits=%llu waits=%llu disk_writes=%llu corrupt=%llu "
           "write_failures=%llu evictions=%llu retries=%llu\n",
           (unsigned long long)s.requests, (unsigned long long)s.builds, (unsigned long long)s.disk_hits,
           (unsigned long long)s.memory_hits, (unsigned long long)s.waits, (unsigned long long)s.disk_writes,
           (unsigned long long)s.corrupt, (unsigned long long)s.write_failures, (unsigned long long)s.evictions,
           (unsigned long long)s.retries);
    printf("cache_dir=%s\n", cg_load_cache_dir());
    printf("secure=%lu rchar=%lld\n", getauxval(AT_SECURE), bytes_read());
    return 0;
}
