/* load.h: the C API of libcallguard-load (docs/load.md).
 *
 * cg_load_binary turns kernel bytes into a loaded module and a kernel handle
 * for Level Zero, OpenCL or CUDA, the way Triton's backends do, with a module
 * cache in memory (single-flight: concurrent requests for one key wait for
 * the first load) and on disk (native binaries, so a second process skips the
 * compiler).
 *
 * libcallguard-load.so has no link dependency on any driver library nor on
 * libcallguard: it calls the driver through the API's own names, looked up
 * at the first call of each API in the process's global scope (so a linked
 * or preloaded callguard layer guards them, e.g. CALLGUARD_SERIALIZE=
 * zeModuleCreate) and, when no loaded object has them, in the vendor library
 * opened by its soname (libze_loader.so.1, libOpenCL.so.1, libcuda.so.1;
 * under `callguard run` that is callguard's shim). Every function is
 * thread-safe. Handles are passed as void * so that this header needs no
 * driver header. */
#ifndef CALLGUARD_LOAD_H
#define CALLGUARD_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "callguard/callguard.h" /* cg_status (the header only: no link to libcallguard) */

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

typedef enum cg_load_api {
    CG_LOAD_API_ZE = 1,   /* Level Zero */
    CG_LOAD_API_CL = 2,   /* OpenCL */
    CG_LOAD_API_CUDA = 3, /* the CUDA driver API */
} cg_load_api;

typedef enum cg_load_format {
    CG_LOAD_FORMAT_IL = 0,     /* ze, cl: SPIR-V; CUDA: PTX text (NUL-terminated or not) */
    CG_LOAD_FORMAT_NATIVE = 1, /* ze: a native binary; cl: a program binary; CUDA: a cubin or fatbin */
    CG_LOAD_FORMAT_SOURCE = 2, /* cl only: OpenCL C source */
} cg_load_format;

/* cg_load_request.flags */
#define CG_LOAD_NO_CACHE 0x1u      /* neither cache: a fresh module that the result owns */
#define CG_LOAD_NO_DISK_CACHE 0x2u /* the memory cache only */
#define CG_LOAD_NO_RETRY 0x4u      /* ze: no second build with the large register file */

typedef struct cg_load_request {
    cg_load_api api;
    /* ze: ze_context_handle_t and ze_device_handle_t; cl: cl_context and
     * cl_device_id; CUDA: both NULL (the calling thread's current context,
     * or the primary context of cuda_device retained and made current). */
    void *context;
    void *device;
    int cuda_device; /* CUDA: the CUdevice ordinal */
    const void *bytes;
    size_t size;
    cg_load_format format;
    const char *kernel_name; /* checked against the module's kernels */
    const char *build_flags; /* NULL or "": none. ze, cl: build options; CUDA: ignored (part of the key) */
    /* CUDA: dynamic shared memory the launches will use; above 48 KiB the
     * function is opted in to the device's maximum (Triton's way). */
    size_t shared_mem;
    /* ze: retry with the large register file when the first build spills
     * more than this many spills (result units); 0: the default (8, Triton's
     * 1000 bytes at SIMD 32); negative: never retry on spills. */
    int max_spills;
    unsigned flags; /* CG_LOAD_* above */
} cg_load_request;

typedef enum cg_load_source {
    CG_LOAD_SOURCE_BUILT = 0,  /* built from the bytes given (cache miss, or no cache) */
    CG_LOAD_SOURCE_MEMORY = 1, /* the module another request of this process loaded */
    CG_LOAD_SOURCE_DISK = 2,   /* loaded from the disk cache's native binary */
} cg_load_source;

typedef struct cg_load_result {
    cg_load_api api;
    void *module; /* ze_module_handle_t, cl_program, CUmodule */
    void *kernel; /* ze_kernel_handle_t, cl_kernel, CUfunction */
    /* Triton's figures. ze: registers from the GRF mode in the flags used
     * (256 large, 128 small, 0 when the flags name none); cl: -1 (OpenCL
     * has no register query); CUDA: CU_FUNC_ATTRIBUTE_NUM_REGS. */
    int n_regs;
    /* In CUDA's units (4-byte registers per thread). ze: spillMemSize /
     * (4 x SIMD width), -1 when the SIMD width is unknown; cl: -1;
     * CUDA: LOCAL_SIZE_BYTES / 4. */
    int n_spills;
    /* ze: the device's maxTotalGroupSize; cl: CL_KERNEL_WORK_GROUP_SIZE;
     * CUDA: CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK. */
    int max_threads;
    /* More figures, -1 when the API does not say. */
    long long spill_bytes;   /* ze: spillMemSize */
    long long private_bytes; /* ze: privateMemSize; cl: CL_KERNEL_PRIVATE_MEM_SIZE; CUDA: LOCAL_SIZE_BYTES */
    long long local_bytes;   /* ze: localMemSize; cl: CL_KERNEL_LOCAL_MEM_SIZE; CUDA: SHARED_SIZE_BYTES */
    int simd_width;          /* ze: required (else max) subgroup size; cl: preferred work-group size multiple */
    char *build_flags;       /* the flags actually used (after a retry: with the large-GRF flag); never NULL */
    char *build_log;         /* the build log of the load that made this module; never NULL */
    cg_load_source source;
    int retried;     /* ze: the large-GRF retry ran (its loser was destroyed) */
    int owns_module; /* 1: cg_load_result_free destroys kernel and module; 0: the cache keeps them */
    /* On failure: the API call that failed, its result code, and whether it
     * is an out-of-resources failure (autotuners skip such configurations). */
    const char *failed_call; /* a static string, NULL on success */
    long api_result;         /* 0 on success */
    int out_of_resources;
    char *message; /* one line saying what failed; "" on success; never NULL */
} cg_load_result;

/* Return values besides callguard.h's CG_OK (0), CG_EINVAL, CG_ENOENT (the
 * kernel name is not in the module, or the API's library is not found) and
 * CG_ENOMEM. */
#define CG_LOAD_EDRIVER (-20)    /* a driver call failed: failed_call, api_result, build_log */
#define CG_LOAD_ERESOURCES (-21) /* the same, and it is an out-of-resources failure */

/* Loads req's bytes. Returns CG_OK or a negative status; in both cases *out
 * is a result (with message, failed_call, api_result and build_log on
 * failure) to be freed with cg_load_result_free, except when out is NULL or
 * the result itself could not be allocated (CG_ENOMEM, *out NULL). */
int cg_load_binary(const cg_load_request *req, cg_load_result **out);
/* Frees the result; when it owns its module, destroys its kernel and module. NULL is fine. */
void cg_load_result_free(cg_load_result *result);
/* "CG_OK", "CG_LOAD_EDRIVER", ...; "unknown" for others. */
const char *cg_load_status_name(int status);

/* Counters of this process, for reports and tests. */
typedef struct cg_load_stats {
    uint64_t requests;
    uint64_t memory_hits; /* served by the memory cache (including waits on a load in flight) */
    uint64_t waits;       /* of those, requests that waited for another thread's load of the same key */
    uint64_t disk_hits;   /* loaded from a native binary of the disk cache */
    uint64_t builds;      /* modules built from the caller's bytes (retries included) */
    uint64_t retries;     /* ze large-GRF retries */
    uint64_t disk_writes; /* entries written */
    uint64_t corrupt;     /* disk entries found corrupt, truncated or refused by the driver (then rebuilt) */
    uint64_t write_failures;
    uint64_t evictions;
} cg_load_stats;
void cg_load_get_stats(cg_load_stats *out);

/* The disk cache's directory ("" when the disk cache is off, which includes a
 * folder or entry not private to the user, and a setuid program): CALLGUARD_CACHE_DIR,
 * else $XDG_CACHE_HOME/callguard, else $HOME/.cache/callguard. */
const char *cg_load_cache_dir(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
