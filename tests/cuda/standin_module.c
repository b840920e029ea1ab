/* The stand-in libcuda.so.1's modules (standin.h): the "compiler" and its
 * race window, the linker that makes a stand-in cubin, and the device's and
 * functions' attributes cg_load_binary asks for. */
#define _GNU_SOURCE
#include "standin.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The "compiler": a PTX-like text with at least one `.entry NAME`, for a `.target` up to sm_90. The sleep is the window
 * in which CGCUDA_COMPILER_RACE=abort looks for a second thread, as a compiler that is not reentrant would fail. */
/* The compile window, shared by cuModuleLoadData (PTX) and cuLinkComplete. */
static void compile_window(const char *who)
{
    int in = atomic_fetch_add(&inside_compile, 1) + 1;
    for (int m = atomic_load(&max_inside); in > m && !atomic_compare_exchange_weak(&max_inside, &m, in);) {}
    if (cfg.race_abort && in > 1) {
        fprintf(stderr,
                "cgcuda: CGCUDA_COMPILER_RACE=abort: %d threads inside %s at once; aborting like a "
                "compiler that is not reentrant\n",
                in, who);
        abort();
    }
    sleep_ms(cfg.compile_ms);
    if (cfg.race_abort && atomic_load(&inside_compile) > 1) {
        fprintf(stderr, "cgcuda: CGCUDA_COMPILER_RACE=abort: another thread entered %s meanwhile\n", who);
        abort();
    }
    atomic_fetch_sub(&inside_compile, 1);
}

#define CUBIN_MAGIC                                                                                                    \
    "\x7f"                                                                                                             \
    "ELF"                                                                                                              \
    "CGCUBIN\n"

/* The entries of a PTX-like text, each with the bytes of its `__local_depotN[BYTES]` if it has one. */
static CUresult parse_entries(const char *text, CUmodule mod)
{
    /* PTX for a newer architecture than the device's (compute capability 9.0): the JIT refuses it. */
    const char *target = strstr(text, ".target");
    if (target) {
        target += 7;
        while (*target == ' ' || *target == '\t')
            target++;
        if (strncmp(target, "sm_", 3) == 0 && atoi(target + 3) > 90) return CUDA_ERROR_INVALID_PTX;
    }
    for (const char *p = text; (p = strstr(p, ".entry")) != NULL;) {
        p += 6;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$");
        if (n == 0 || n >= sizeof mod->func[0].name || mod->nfunc == MAX_ENTRIES) return CUDA_ERROR_INVALID_PTX;
        struct CUfunc_st *f = &mod->func[mod->nfunc];
        memcpy(f->name, p, n);
        f->mod = mod;
        f->max_dynamic_shared = 49152 - 1024; /* the default: 48 KiB less the static shared memory */
        const char *next = strstr(p, ".entry"), *depot = strstr(p, "__local_depot");
        if (depot && (!next || depot < next)) {
            const char *b = strchr(depot, '[');
            if (b && (!next || b < next)) f->local_bytes = atoi(b + 1);
        }
        mod->nfunc++;
    }
    return mod->nfunc ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

/* CGCUDA_UNLOAD_RACE=abort: a module call's window, which no launch may overlap (standin_stream.c). */
static void module_window(void)
{
    atomic_fetch_add(&inside_unload, 1);
    unload_race_check("a module unload or load");
    struct timespec ts = {0, 1000000L};
    nanosleep(&ts, NULL);
    unload_race_check("a module unload or load");
    atomic_fetch_sub(&inside_unload, 1);
}

/* The "compiler": a PTX-like text with at least one `.entry NAME`, for a `.target` up to sm_90. The sleep is the window
 * in which CGCUDA_COMPILER_RACE=abort looks for a second thread, as a compiler that is not reentrant would fail. A
 * stand-in cubin (from cuLinkComplete) loads without compiling, as a real cubin skips the PTX JIT. */
EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    COUNT();
    NEED_INIT();
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    if (cfg.unload_race_abort) module_window();
    const char *text = image;
    size_t ml = sizeof CUBIN_MAGIC - 1;
    if (memcmp(image,
               "\x7f"
               "ELF",
               4) == 0) {
        if (memcmp(image, CUBIN_MAGIC, ml) != 0) return CUDA_ERROR_INVALID_IMAGE;
        text += ml;
    } else {
        compile_window("cuModuleLoadData");
    }
    CUmodule mod = calloc(1, sizeof *mod);
    if (!mod) return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = parse_entries(text, mod);
    if (r != CUDA_SUCCESS) {
        free(mod);
        return r;
    }
    mod->magic = MOD_MAGIC;
    *module = mod;
    return CUDA_SUCCESS;
}

/* ---- the linker: PTX in, a stand-in cubin out ---- */

struct CUlinkState_st {
    char *ptx;
    void *cubin;
};

EXPORT CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                                CUlinkState *stateOut)
{
    COUNT();
    NEED_INIT();
    (void)options, (void)optionValues;
    if (!stateOut || (numOptions && (!options || !optionValues))) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_ctx(current)) return CUDA_ERROR_INVALID_CONTEXT;
    *stateOut = calloc(1, sizeof **stateOut);
    return *stateOut ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                                 unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    COUNT();
    NEED_INIT();
    (void)name, (void)numOptions, (void)options, (void)optionValues;
    if (!state || !data || size == 0) return CUDA_ERROR_INVALID_VALUE;
    if (type != CU_JIT_INPUT_PTX) return CUDA_ERROR_INVALID_VALUE; /* the stand-in links PTX only */
    if (state->ptx) return CUDA_ERROR_INVALID_VALUE;               /* and one input */
    state->ptx = strndup(data, size);
    return state->ptx ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    COUNT();
    NEED_INIT();
    if (!state || !cubinOut || !sizeOut || !state->ptx) return CUDA_ERROR_INVALID_VALUE;
    compile_window("cuLinkComplete");
    struct CUmod_st check = {0};
    CUresult r = parse_entries(state->ptx, &check);
    if (r != CUDA_SUCCESS) return r;
    size_t ml = sizeof CUBIN_MAGIC - 1, n = strlen(state->ptx) + 1;
    free(state->cubin);
    if (!(state->cubin = malloc(ml + n))) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(state->cubin, CUBIN_MAGIC, ml);
    memcpy((char *)state->cubin + ml, state->ptx, n);
    *cubinOut = state->cubin; /* owned by the state, as the driver's is */
    *sizeOut = ml + n;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuLinkDestroy(CUlinkState state)
{
    COUNT();
    if (!state) return CUDA_ERROR_INVALID_HANDLE;
    free(state->ptx);
    free(state->cubin);
    free(state);
    return CUDA_SUCCESS;
}

/* ---- device and function attributes (an H200's figures where it matters) ---- */

#define OPTIN_SHARED 232448
#define SM_SHARED 233472

EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    COUNT();
    NEED_INIT();
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *pi = OPTIN_SHARED; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *pi = SM_SHARED; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *pi = 49152; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 132; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    COUNT();
    NEED_INIT();
    if (!uuid) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_dev(dev)) return CUDA_ERROR_INVALID_DEVICE;
    memset(uuid, 0, sizeof *uuid);
    memcpy(uuid->bytes, "cg stand-in dev", 15);
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev) { return cuDeviceGetUuid_v2(uuid, dev); }

static int valid_func(CUfunction f) { return f && f->mod && f->mod->magic == MOD_MAGIC; }

EXPORT CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    COUNT();
    NEED_INIT();
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_func(hfunc)) return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = hfunc->local_bytes; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 1024; return CUDA_SUCCESS; /* static shared memory */
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = hfunc->max_dynamic_shared; return CUDA_SUCCESS;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
}

EXPORT CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    COUNT();
    NEED_INIT();
    if (!valid_func(hfunc)) return CUDA_ERROR_INVALID_HANDLE;
    if (attrib != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_INVALID_VALUE;
    if (value < 0 || value > OPTIN_SHARED - 1024) return CUDA_ERROR_INVALID_VALUE;
    hfunc->max_dynamic_shared = value;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    NEED_INIT();
    (void)config;
    return valid_func(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    COUNT();
    NEED_INIT();
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!hmod || hmod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    for (unsigned i = 0; i < hmod->nfunc; i++)
        if (strcmp(hmod->func[i].name, name) == 0) {
            *hfunc = &hmod->func[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    COUNT();
    NEED_INIT();
    if (cfg.unload_race_abort) module_window();
    if (!hmod || hmod->magic != MOD_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    hmod->magic = 0;
    free(hmod);
    return CUDA_SUCCESS;
}
