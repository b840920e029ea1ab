/*
 * Modules and build logs; their kernels are kernel.c's.
 *
 * Input conventions (see docs/zesim.md):
 *   SPIR-V (ZE_MODULE_FORMAT_IL_SPIRV): the first little-endian word must be the SPIR-V magic 0x07230203.
 *     - If the next word looks like a real SPIR-V version word (bytes 00 mm 01 00), the module is walked as real
 *       SPIR-V and every OpEntryPoint names a kernel.
 *     - Otherwise the bytes after the magic are NUL-separated kernel specs "name[:key=value]..." where key is
 *       args, spill, private, regs, grf or slm (decimal).
 *       Example: "\x03\x02\x23\x07" "saxpy:args=4\0" "big:spill=512\0".
 *       grf=N: the build fails out of resources unless its flags' GRF mode gives N registers per thread (128;
 *       256 with -cl-intel-256-GRF-per-thread or -ze-opt-large-register-file); slm=N: zeKernelCreate fails out of
 *       resources when N bytes exceed the device's shared local memory.
 *     The first SPIR-V compile opens the compiler library (compiler.c), as NEO opens IGC. Compilation sleeps
 *     CGSIM_COMPILE_MS; that sleep is the window in which CGSIM_COMPILER_RACE=abort looks for a second compiling
 *     thread.
 *   Native (ZE_MODULE_FORMAT_NATIVE): what zeModuleGetNativeBinary returns: "CGSIMBIN", a little-endian uint32
 *     version (1), a little-endian uint32 kernel count, then that many NUL-terminated kernel specs with every key
 *     spelled out (grf and slm only when not 0). Loads without sleeping.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPIRV_MAGIC 0x07230203u
#define NATIVE_MAGIC "CGSIMBIN"
#define NATIVE_MAGIC_LEN 8u
#define NATIVE_VERSION 1u
#define NATIVE_HEADER_LEN (NATIVE_MAGIC_LEN + 8u)
#define MAX_KERNELS 4096u
#define MAX_NAME_LEN 1024u
#define MAX_FIGURE (1u << 30)

#define DEFAULT_ARGS 0u
#define DEFAULT_REGISTERS 128u

static atomic_uint compilers_inside; /* threads currently inside the simulated compile window */
static atomic_ullong next_module_id = 1;

/* ---- text buffer for build logs ----------------------------------------------------------------------------- */

struct text {
    char *buf;
    size_t len;
    size_t cap;
    bool failed; /* out of memory */
};

static void text_printf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_printf(struct text *t, const char *fmt, ...)
{
    if (t->failed) return;
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0) return;
    if (t->len + (size_t)need + 1 > t->cap) {
        size_t cap = (t->cap ? t->cap : 256);
        while (cap < t->len + (size_t)need + 1)
            cap *= 2;
        char *grown = realloc(t->buf, cap);
        if (!grown) {
            t->failed = true;
            return;
        }
        t->buf = grown;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)need;
}

/* ---- kernel lists ------------------------------------------------------------------------------------------- */

struct kernel_list {
    struct cgsim_kernel_info *items;
    uint32_t count;
    uint32_t cap;
};

static void kernel_list_free(struct kernel_list *l)
{
    for (uint32_t i = 0; i < l->count; i++)
        free(l->items[i].name);
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* Adds a kernel; returns false with a log line on a duplicate, a limit, or out of memory. */
static bool kernel_list_add(struct kernel_list *l, const char *name, size_t name_len, struct text *log)
{
    if (name_len == 0 || name_len > MAX_NAME_LEN) {
        text_printf(log, "error: kernel name length %zu is outside 1..%u\n", name_len, MAX_NAME_LEN);
        return false;
    }
    for (uint32_t i = 0; i < l->count; i++) {
        if (strlen(l->items[i].name) == name_len && memcmp(l->items[i].name, name, name_len) == 0) {
            text_printf(log, "error: kernel '%.*s' is defined twice\n", (int)name_len, name);
            return false;
        }
    }
    if (l->count == MAX_KERNELS) {
        text_printf(log, "error: more than %u kernels in one module\n", MAX_KERNELS);
        return false;
    }
    if (l->count == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 8;
        struct cgsim_kernel_info *grown = realloc(l->items, cap * sizeof *grown);
        if (!grown) return false;
        l->items = grown;
        l->cap = cap;
    }
    char *copy = malloc(name_len + 1);
    if (!copy) return false;
    memcpy(copy, name, name_len);
    copy[name_len] = '\0';
    l->items[l->count++] =
        (struct cgsim_kernel_info){.name = copy, .num_args = DEFAULT_ARGS, .registers = DEFAULT_REGISTERS};
    return true;
}

static bool parse_figure(const char *s, size_t len, uint32_t *out)
{
    if (len == 0 || len > 10) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v > MAX_FIGURE) return false;
    *out = (uint32_t)v;
    return true;
}

/* Parses one kernel spec "name[:key=value]..." of `len` printable bytes. */
static bool parse_kernel_spec(struct kernel_list *l, const char *spec, size_t len, struct text *log)
{
    const char *colon = memchr(spec, ':', len);
    size_t name_len = colon ? (size_t)(colon - spec) : len;
    if (!kernel_list_add(l, spec, name_len, log)) return false;
    struct cgsim_kernel_info *k = &l->items[l->count - 1];
    const char *p = colon;
    const char *end = spec + len;
    while (p && p < end) {
        const char *key = p + 1;
        const char *next = memchr(key, ':', (size_t)(end - key));
        const char *item_end = next ? next : end;
        const char *eq = memchr(key, '=', (size_t)(item_end - key));
        uint32_t value = 0;
        uint32_t *field = NULL;
        if (eq) {
            size_t key_len = (size_t)(eq - key);
            if (key_len == 4 && memcmp(key, "args", 4) == 0)
                field = &k->num_args;
            else if (key_len == 5 && memcmp(key, "spill", 5) == 0)
                field = &k->spill_bytes;
            else if (key_len == 7 && memcmp(key, "private", 7) == 0)
                field = &k->private_bytes;
            else if (key_len == 4 && memcmp(key, "regs", 4) == 0)
                field = &k->registers;
            else if (key_len == 3 && memcmp(key, "grf", 3) == 0)
                field = &k->grf;
            else if (key_len == 3 && memcmp(key, "slm", 3) == 0)
                field = &k->slm_bytes;
        }
        if (!field || !parse_figure(eq + 1, (size_t)(item_end - eq - 1), &value)) {
            text_printf(log,
                        "error: kernel '%s': bad attribute '%.*s'; expected args=N, spill=N, private=N, regs=N, grf=N "
                        "or slm=N\n",
                        k->name, (int)(item_end - key), key);
            return false;
        }
        *field = value;
        p = next;
    }
    return true;
}

/* Parses NUL-separated kernel specs in [data, data+size); base_offset is only for error messages. */
static bool parse_spec_list(struct kernel_list *l, const uint8_t *data, size_t size, size_t base_offset,
                            struct text *log)
{
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != 0) {
            if (data[i] < 0x21 || data[i] > 0x7e) {
                text_printf(log,
                            "error: byte 0x%02x at offset %zu is not printable ASCII; after the magic the input must "
                            "hold NUL-separated kernel names\n",
                            data[i], base_offset + i);
                return false;
            }
            continue;
        }
        if (i > start && !parse_kernel_spec(l, (const char *)data + start, i - start, log)) return false;
        start = i + 1;
    }
    return true;
}

static uint32_t read_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void write_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Walks a real SPIR-V module (5-word header, then instructions): every OpEntryPoint names a kernel, and the
 * OpFunctionParameters of the entry point's OpFunction give its argument count. */
static bool parse_real_spirv(struct kernel_list *l, const uint8_t *data, size_t size, struct text *log)
{
    enum { OP_ENTRY_POINT = 15, OP_FUNCTION = 54, OP_FUNCTION_PARAMETER = 55, OP_FUNCTION_END = 56 };
    if (size % 4 != 0) {
        text_printf(log, "error: SPIR-V size %zu is not a multiple of 4\n", size);
        return false;
    }
    size_t words = size / 4;
    uint32_t *entry_ids = NULL; /* parallel to l->items: the <id> of each entry point's function */
    struct cgsim_kernel_info *current = NULL;
    bool ok = true;
    for (int pass = 0; pass < 2 && ok; pass++) {
        for (size_t w = 5; w < words && ok;) {
            uint32_t first = read_le32(data + 4 * w);
            uint32_t count = first >> 16;
            uint32_t opcode = first & 0xffffu;
            if (count == 0 || w + count > words) {
                text_printf(log, "error: malformed SPIR-V instruction at word %zu\n", w);
                ok = false;
                break;
            }
            if (pass == 0 && opcode == OP_ENTRY_POINT && count >= 4) {
                const char *name = (const char *)data + 4 * (w + 3);
                size_t room = 4 * (size_t)(count - 3);
                size_t len = strnlen(name, room);
                if (len == room) {
                    text_printf(log, "error: unterminated OpEntryPoint name at word %zu\n", w);
                    ok = false;
                } else if ((ok = kernel_list_add(l, name, len, log))) {
                    uint32_t *grown = realloc(entry_ids, l->count * sizeof *grown);
                    if (!grown) {
                        ok = false;
                    } else {
                        entry_ids = grown;
                        entry_ids[l->count - 1] = read_le32(data + 4 * (w + 2));
                    }
                }
            } else if (pass == 1 && opcode == OP_FUNCTION && count >= 3) {
                uint32_t id = read_le32(data + 4 * (w + 2));
                current = NULL;
                for (uint32_t i = 0; i < l->count; i++)
                    if (entry_ids[i] == id) current = &l->items[i];
            } else if (pass == 1 && opcode == OP_FUNCTION_PARAMETER && current) {
                current->num_args++;
            } else if (pass == 1 && opcode == OP_FUNCTION_END) {
                current = NULL;
            }
            w += count;
        }
        if (l->count == 0) break;
    }
    free(entry_ids);
    return ok;
}

static bool looks_like_real_spirv(const uint8_t *data, size_t size)
{
    return size >= 20 && data[4] == 0 && data[6] == 1 && data[7] == 0;
}

/* ---- build logs --------------------------------------------------------------------------------------------- */

static ze_result_t make_build_log(struct text *t, ze_module_build_log_handle_t *out)
{
    struct cgsim_build_log *log = calloc(1, sizeof *log);
    char *text = t->failed || !t->buf ? cgsim_strdup("") : t->buf;
    if (!log || !text) {
        free(log);
        if (text != t->buf) free(text);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (text == t->buf) t->buf = NULL; /* ownership moves to the log */
    cgsim_object_init(&log->hdr, CGSIM_KIND_BUILD_LOG);
    log->text = text;
    if (!cgsim_handle_register(&log->hdr)) {
        free(text);
        free(log);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *out = (ze_module_build_log_handle_t)log;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_build_log_destroy(ze_module_build_log_handle_t hLog)
{
    CGSIM_CHECK_HANDLE(log, struct cgsim_build_log, hLog, CGSIM_KIND_BUILD_LOG);
    cgsim_handle_unregister(&log->hdr);
    free(log->text);
    free(log);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_build_log_get_string(ze_module_build_log_handle_t hLog, size_t *pSize, char *pBuf)
{
    CGSIM_CHECK_HANDLE(log, struct cgsim_build_log, hLog, CGSIM_KIND_BUILD_LOG);
    CGSIM_CHECK_PTR(pSize);
    size_t need = strlen(log->text) + 1;
    if (pBuf == NULL || *pSize == 0) {
        *pSize = need;
        return ZE_RESULT_SUCCESS;
    }
    /* A short buffer gets a truncated, still NUL-terminated log. */
    size_t n = *pSize < need ? *pSize : need;
    memcpy(pBuf, log->text, n - 1);
    pBuf[n - 1] = '\0';
    *pSize = n;
    return ZE_RESULT_SUCCESS;
}

void cgsim_fill_build_log_table(ze_module_build_log_dditable_t *t)
{
    t->pfnDestroy = cgsim_build_log_destroy;
    t->pfnGetString = cgsim_build_log_get_string;
}

/* ---- modules ------------------------------------------------------------------------------------------------ */

/* The compile window: sleeping here is what makes zeModuleCreate slow, and two threads in here at once is the
 * situation that crashed IGC 2.38.x, which CGSIM_COMPILER_RACE=abort reproduces. */
static void simulate_compile(const struct cgsim_config *cfg)
{
    unsigned already_inside = atomic_fetch_add(&compilers_inside, 1);
    if (already_inside > 0 && cfg->race == CGSIM_RACE_ABORT) {
        fprintf(stderr,
                "cgsim: CGSIM_COMPILER_RACE=abort: %u threads inside zeModuleCreate at once; aborting like a "
                "compiler that is not thread-safe\n",
                already_inside + 1);
        abort();
    }
    cgsim_sleep_us(cfg->compile_ms * 1000u);
    atomic_fetch_sub(&compilers_inside, 1);
}

static void log_kernels(struct text *log, const struct kernel_list *l)
{
    for (uint32_t i = 0; i < l->count; i++) {
        const struct cgsim_kernel_info *k = &l->items[i];
        text_printf(log, "kernel %s: %u args, %u registers, %u bytes spill, %u bytes private\n", k->name, k->num_args,
                    k->registers, k->spill_bytes, k->private_bytes);
    }
}

/* Whether the space-separated build flags hold `flag` as a whole word. */
static bool has_flag(const char *flags, const char *flag)
{
    size_t n = strlen(flag);
    for (const char *p = flags; p && (p = strstr(p, flag)) != NULL; p += n)
        if ((p == flags || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' ')) return true;
    return false;
}

/* Registers per thread of the build's GRF mode, as IGC's flags set it. */
static uint32_t grf_of_flags(const char *flags)
{
    return has_flag(flags, "-cl-intel-256-GRF-per-thread") || has_flag(flags, "-ze-opt-large-register-file") ? 256u
                                                                                                             : 128u;
}

/* A kernel that needs more registers than the GRF mode gives (grf=N) fails the build out of resources, as a
 * compiler that cannot spill its way out would; the log names the kernel and the flag that gives more. */
static ze_result_t check_registers(const struct kernel_list *l, const char *flags, struct text *log)
{
    uint32_t have = grf_of_flags(flags ? flags : "");
    ze_result_t r = ZE_RESULT_SUCCESS;
    for (uint32_t i = 0; i < l->count; i++)
        if (l->items[i].grf > have) {
            text_printf(log,
                        "error: kernel %s needs %u registers per thread; the GRF mode of this build gives %u%s: out "
                        "of resources\n",
                        l->items[i].name, l->items[i].grf, have,
                        have < 256 ? " (-cl-intel-256-GRF-per-thread gives 256)" : "");
            r = ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
        }
    return r;
}

static ze_result_t build_from_spirv(const struct cgsim_config *cfg, const uint8_t *in, size_t size, const char *flags,
                                    struct kernel_list *out, struct text *log)
{
    if (size < 4 || read_le32(in) != SPIRV_MAGIC) {
        text_printf(log,
                    "error: input of %zu bytes does not start with the SPIR-V magic number 0x07230203 "
                    "(little-endian)\n",
                    size);
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    const char *no_compiler = cgsim_compiler_open();
    if (no_compiler) {
        text_printf(log, "error: %s\n", no_compiler);
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    simulate_compile(cfg);
    bool ok = looks_like_real_spirv(in, size) ? parse_real_spirv(out, in, size, log)
                                              : parse_spec_list(out, in + 4, size - 4, 4, log);
    if (!ok || log->failed) {
        text_printf(log, "cgsim: SPIR-V compilation failed\n");
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    if (check_registers(out, flags, log) != ZE_RESULT_SUCCESS) {
        text_printf(log, "cgsim: SPIR-V compilation failed: out of registers\n");
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    text_printf(log, "cgsim: compiled %u kernel(s) from SPIR-V in %llu ms\n", out->count,
                (unsigned long long)cfg->compile_ms);
    log_kernels(log, out);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t load_native(const uint8_t *in, size_t size, struct kernel_list *out, struct text *log)
{
    if (size < NATIVE_HEADER_LEN || memcmp(in, NATIVE_MAGIC, NATIVE_MAGIC_LEN) != 0) {
        text_printf(log, "error: native binary of %zu bytes does not start with \"" NATIVE_MAGIC "\"\n", size);
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    uint32_t version = read_le32(in + NATIVE_MAGIC_LEN);
    uint32_t count = read_le32(in + NATIVE_MAGIC_LEN + 4);
    if (version != NATIVE_VERSION) {
        text_printf(log, "error: native binary version %u; this simulator reads version %u\n", version, NATIVE_VERSION);
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    const uint8_t *body = in + NATIVE_HEADER_LEN;
    size_t body_size = size - NATIVE_HEADER_LEN;
    if (body_size > 0 && body[body_size - 1] != 0) {
        text_printf(log, "error: native binary is truncated (last kernel spec is not NUL-terminated)\n");
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    if (!parse_spec_list(out, body, body_size, NATIVE_HEADER_LEN, log) || out->count != count) {
        text_printf(log, "error: native binary is corrupt (header says %u kernels, found %u)\n", count, out->count);
        return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    text_printf(log, "cgsim: loaded %u kernel(s) from a native binary\n", out->count);
    log_kernels(log, out);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_module_create(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                                  const ze_module_desc_t *desc, ze_module_handle_t *phModule,
                                                  ze_module_build_log_handle_t *phBuildLog)
{
    CGSIM_CHECK_HANDLE(ctx, struct cgsim_context, hContext, CGSIM_KIND_CONTEXT);
    CGSIM_CHECK_HANDLE(dev, struct cgsim_device, hDevice, CGSIM_KIND_DEVICE);
    CGSIM_CHECK_PTR(desc);
    CGSIM_CHECK_PTR(phModule);
    CGSIM_CHECK_PTR(desc->pInputModule);
    if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV && desc->format != ZE_MODULE_FORMAT_NATIVE)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->inputSize == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (phBuildLog) *phBuildLog = NULL;

    struct text log = {0};
    struct kernel_list kernels = {0};
    ze_result_t r = desc->format == ZE_MODULE_FORMAT_IL_SPIRV
                        ? build_from_spirv(&ctx->driver->config, desc->pInputModule, desc->inputSize, desc->pBuildFlags,
                                           &kernels, &log)
                        : load_native(desc->pInputModule, desc->inputSize, &kernels, &log);

    struct cgsim_module *mod = NULL;
    if (r == ZE_RESULT_SUCCESS) {
        mod = calloc(1, sizeof *mod);
        const char **names = calloc(kernels.count ? kernels.count : 1, sizeof *names);
        if (!mod || !names) {
            free(mod);
            free(names);
            mod = NULL;
            r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        } else {
            cgsim_object_init(&mod->hdr, CGSIM_KIND_MODULE);
            mod->context = ctx;
            mod->device = dev;
            mod->kernel_count = kernels.count;
            mod->kernels = kernels.items;
            mod->kernel_names = names;
            mod->id = atomic_fetch_add(&next_module_id, 1);
            for (uint32_t i = 0; i < kernels.count; i++)
                names[i] = kernels.items[i].name;
            memset(&kernels, 0, sizeof kernels); /* now owned by the module */
            if (!cgsim_handle_register(&mod->hdr)) {
                r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
                kernels = (struct kernel_list){mod->kernels, mod->kernel_count, mod->kernel_count};
                free(names);
                free(mod);
                mod = NULL;
            }
        }
    }
    kernel_list_free(&kernels);

    if (phBuildLog) {
        ze_result_t lr = make_build_log(&log, phBuildLog);
        if (lr != ZE_RESULT_SUCCESS && r == ZE_RESULT_SUCCESS)
            r = lr; /* (module leaks here only if OOM struck twice; acceptable for a simulator) */
    }
    free(log.buf);
    if (r == ZE_RESULT_SUCCESS) *phModule = (ze_module_handle_t)mod;
    return r;
}

static ze_result_t ZE_APICALL cgsim_module_destroy(ze_module_handle_t hModule)
{
    CGSIM_CHECK_HANDLE(mod, struct cgsim_module, hModule, CGSIM_KIND_MODULE);
    /* The spec requires kernels to go first; refusing keeps kernels from pointing into a freed module. */
    if (atomic_load(&mod->live_kernels) > 0) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    cgsim_handle_unregister(&mod->hdr);
    struct kernel_list kernels = {mod->kernels, mod->kernel_count, mod->kernel_count};
    kernel_list_free(&kernels);
    free(mod->kernel_names);
    free(mod);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_module_dynamic_link(uint32_t numModules, ze_module_handle_t *phModules,
                                                        ze_module_build_log_handle_t *phLinkLog)
{
    CGSIM_CHECK_PTR(phModules);
    if (phLinkLog) *phLinkLog = NULL;
    struct cgsim_config cfg = {0};
    for (uint32_t i = 0; i < numModules; i++) {
        CGSIM_CHECK_HANDLE(mod, struct cgsim_module, phModules[i], CGSIM_KIND_MODULE);
        cfg = mod->context->driver->config;
    }
    /* Linking is cheaper than compiling: a tenth of the compile time. */
    cgsim_sleep_us(cfg.compile_ms * 100u);
    if (!phLinkLog) return ZE_RESULT_SUCCESS;
    struct text log = {0};
    text_printf(&log, "cgsim: linked %u module(s); no unresolved imports\n", numModules);
    ze_result_t r = make_build_log(&log, phLinkLog);
    free(log.buf);
    return r;
}

/* Serialises the kernels in the native format described at the top of this file. */
static ze_result_t ZE_APICALL cgsim_module_get_native_binary(ze_module_handle_t hModule, size_t *pSize,
                                                             uint8_t *pModuleNativeBinary)
{
    CGSIM_CHECK_HANDLE(mod, struct cgsim_module, hModule, CGSIM_KIND_MODULE);
    CGSIM_CHECK_PTR(pSize);
    struct text body = {0};
    for (uint32_t i = 0; i < mod->kernel_count; i++) {
        const struct cgsim_kernel_info *k = &mod->kernels[i];
        text_printf(&body, "%s:args=%u:spill=%u:private=%u:regs=%u", k->name, k->num_args, k->spill_bytes,
                    k->private_bytes, k->registers);
        if (k->grf) text_printf(&body, ":grf=%u", k->grf);
        if (k->slm_bytes) text_printf(&body, ":slm=%u", k->slm_bytes);
        text_printf(&body, "%c", 1); /* placeholder for the NUL separator, replaced below */
    }
    if (body.failed) {
        free(body.buf);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (size_t i = 0; i < body.len; i++)
        if (body.buf[i] == 1) body.buf[i] = '\0';
    size_t need = NATIVE_HEADER_LEN + body.len;
    if (pModuleNativeBinary == NULL) {
        *pSize = need;
        free(body.buf);
        return ZE_RESULT_SUCCESS;
    }
    if (*pSize < need) {
        free(body.buf);
        return ZE_RESULT_ERROR_INVALID_SIZE;
    }
    memcpy(pModuleNativeBinary, NATIVE_MAGIC, NATIVE_MAGIC_LEN);
    write_le32(pModuleNativeBinary + NATIVE_MAGIC_LEN, NATIVE_VERSION);
    write_le32(pModuleNativeBinary + NATIVE_MAGIC_LEN + 4, mod->kernel_count);
    if (body.len) memcpy(pModuleNativeBinary + NATIVE_HEADER_LEN, body.buf, body.len);
    *pSize = need;
    free(body.buf);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_module_get_global_pointer(ze_module_handle_t hModule, const char *pGlobalName,
                                                              size_t *pSize, void **pptr)
{
    CGSIM_CHECK_HANDLE(mod, struct cgsim_module, hModule, CGSIM_KIND_MODULE);
    (void)mod;
    (void)pSize;
    (void)pptr;
    CGSIM_CHECK_PTR(pGlobalName);
    return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME; /* simulated modules have no globals */
}

static ze_result_t ZE_APICALL cgsim_module_get_kernel_names(ze_module_handle_t hModule, uint32_t *pCount,
                                                            const char **pNames)
{
    CGSIM_CHECK_HANDLE(mod, struct cgsim_module, hModule, CGSIM_KIND_MODULE);
    CGSIM_CHECK_PTR(pCount);
    if (*pCount == 0 || pNames == NULL) {
        *pCount = mod->kernel_count;
        return ZE_RESULT_SUCCESS;
    }
    uint32_t n = *pCount < mod->kernel_count ? *pCount : mod->kernel_count;
    for (uint32_t i = 0; i < n; i++)
        pNames[i] = mod->kernel_names[i];
    *pCount = n;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_module_get_properties(ze_module_handle_t hModule, ze_module_properties_t *props)
{
    CGSIM_CHECK_HANDLE(mod, struct cgsim_module, hModule, CGSIM_KIND_MODULE);
    (void)mod;
    CGSIM_CHECK_PTR(props);
    props->flags = 0; /* no unresolved imports */
    return ZE_RESULT_SUCCESS;
}

static ze_result_t ZE_APICALL cgsim_module_get_function_pointer(ze_module_handle_t hModule, const char *pFunctionName,
                                                                void **pfnFunction)
{
    CGSIM_CHECK_HANDLE(mod, struct cgsim_module, hModule, CGSIM_KIND_MODULE);
    (void)mod;
    CGSIM_CHECK_PTR(pFunctionName);
    CGSIM_CHECK_PTR(pfnFunction);
    return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
}

void cgsim_fill_module_table(ze_module_dditable_t *t)
{
    t->pfnCreate = cgsim_module_create;
    t->pfnDestroy = cgsim_module_destroy;
    t->pfnDynamicLink = cgsim_module_dynamic_link;
    t->pfnGetNativeBinary = cgsim_module_get_native_binary;
    t->pfnGetGlobalPointer = cgsim_module_get_global_pointer;
    t->pfnGetKernelNames = cgsim_module_get_kernel_names;
    t->pfnGetProperties = cgsim_module_get_properties;
    t->pfnGetFunctionPointer = cgsim_module_get_function_pointer;
}
