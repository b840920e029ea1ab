/* The parts of the stand-in libcuda.so.1 (standin.c says what it is):
 *   standin.c           configuration, call counts, devices and contexts
 *   standin_module.c    modules, the "compiler" and linker, device and function attributes
 *   standin_stream.c    streams and launches, events, memory, errors, the export table
 *   standin_procaddr.c  cuGetProcAddress and its _v2 form
 * Everything here is hidden (-fvisibility=hidden) but the exports marked EXPORT. */
#ifndef CGCUDA_STANDIN_H
#define CGCUDA_STANDIN_H

#include <cuda.h>

#include <stdatomic.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

/* The environment's CGCUDA_* settings (standin.c). */
extern struct standin_cfg {
    unsigned compile_ms, kernel_ms, devices;
    int race_abort;
    int unload_race_abort;
    int driver_version;
    int ctx_create_hang;
} cfg;

/* One more call of the export `name` (cgcuda_standin_calls). */
void count(const char *name);
#define COUNT() count(__func__)

/* Threads inside the "compiler" now, and the most seen at once. */
extern atomic_int inside_compile, max_inside;
/* CGCUDA_UNLOAD_RACE=abort (standin_stream.c): launches inside now and the most seen at once, unloads inside now. */
extern atomic_int inside_launch, max_launches, inside_unload;
void unload_race_check(const char *who);

/* ---- objects ---- */

#define CTX_MAGIC 0x63747843u /* "Cxtc" */
struct CUctx_st {
    unsigned magic;
    CUdevice dev;
    int primary;
};
#define MAX_ENTRIES 8
struct CUfunc_st {
    struct CUmod_st *mod;
    char name[64];
    int local_bytes, max_dynamic_shared;
};
#define MOD_MAGIC 0x646f4d43u
struct CUmod_st {
    unsigned magic;
    unsigned nfunc;
    struct CUfunc_st func[MAX_ENTRIES];
};
struct CUstream_st {
    _Atomic long long busy_until_ns; /* CLOCK_MONOTONIC time the last launch ends */
};

extern atomic_int initialized;
extern __thread CUcontext current;
/* When the last launch on any stream ends (cuCtxSynchronize waits for it). */
extern _Atomic long long all_busy_until_ns;

static inline long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline void sleep_until(long long t)
{
    for (long long left; (left = t - now_ns()) > 0;) {
        struct timespec ts = {(time_t)(left / 1000000000LL), (long)(left % 1000000000LL)};
        nanosleep(&ts, NULL);
    }
}

static inline void sleep_ms(unsigned ms) { sleep_until(now_ns() + (long long)ms * 1000000LL); }

#define NEED_INIT()                                                                                                    \
    do {                                                                                                               \
        if (!atomic_load(&initialized)) return CUDA_ERROR_NOT_INITIALIZED;                                             \
    } while (0)

static inline int valid_ctx(CUcontext c) { return c && c->magic == CTX_MAGIC; }
static inline int valid_dev(CUdevice d) { return d >= 0 && (unsigned)d < cfg.devices; }

#endif
