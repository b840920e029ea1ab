/* Shared helpers for the simulator tests. Every test links the real Level Zero loader and reaches the simulator
 * through ZE_ENABLE_ALT_DRIVERS, exactly as an application in CI would. */
#ifndef ZESIM_TEST_H
#define ZESIM_TEST_H

#define _GNU_SOURCE
#include <level_zero/ze_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                   \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

#define CHECK_ZE(expected, call)                                                                                       \
    do {                                                                                                               \
        ze_result_t r_ = (call);                                                                                       \
        if (r_ != (expected)) {                                                                                        \
            fprintf(stderr, "%s:%d: %s returned 0x%x, expected 0x%x\n", __FILE__, __LINE__, #call, (unsigned)r_,       \
                    (unsigned)(expected));                                                                             \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

#define OK(call) CHECK_ZE(ZE_RESULT_SUCCESS, call)

struct sim {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
};

static inline struct sim sim_open(void)
{
    struct sim s = {0};
    OK(zeInit(0));
    uint32_t n = 1;
    OK(zeDriverGet(&n, &s.driver));
    CHECK(n == 1);
    n = 1;
    OK(zeDeviceGet(s.driver, &n, &s.device));
    CHECK(n == 1);
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    OK(zeContextCreate(s.driver, &cd, &s.context));
    return s;
}

static inline void sim_close(struct sim *s) { OK(zeContextDestroy(s->context)); }

static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Builds simulator SPIR-V input: the SPIR-V magic followed by NUL-separated kernel specs. */
static inline size_t make_spirv(uint8_t *buf, size_t cap, const char *const *specs, size_t n)
{
    const uint8_t magic[4] = {0x03, 0x02, 0x23, 0x07};
    size_t len = 4;
    CHECK(cap >= 4);
    memcpy(buf, magic, 4);
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(specs[i]) + 1;
        CHECK(len + l <= cap);
        memcpy(buf + len, specs[i], l);
        len += l;
    }
    return len;
}

static inline ze_result_t create_module(struct sim *s, ze_module_format_t format, const uint8_t *data, size_t size,
                                        ze_module_handle_t *mod, ze_module_build_log_handle_t *log)
{
    ze_module_desc_t md = {
        .stype = ZE_STRUCTURE_TYPE_MODULE_DESC, .format = format, .inputSize = size, .pInputModule = data};
    return zeModuleCreate(s->context, s->device, &md, mod, log);
}

/* Returns the build log text (malloc'd) and destroys the log. */
static inline char *take_log(ze_module_build_log_handle_t log)
{
    size_t size = 0;
    OK(zeModuleBuildLogGetString(log, &size, NULL));
    CHECK(size >= 1);
    char *text = malloc(size);
    CHECK(text);
    OK(zeModuleBuildLogGetString(log, &size, text));
    OK(zeModuleBuildLogDestroy(log));
    return text;
}

/* True when the loader wraps handles (it then dereferences them itself, so NULL or foreign handles crash inside
 * the loader before the simulator can refuse them). */
static inline int loader_intercepts(void)
{
    const char *v = getenv("ZE_ENABLE_LOADER_INTERCEPT");
    return v && strcmp(v, "1") == 0;
}

#endif
