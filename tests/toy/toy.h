/* toy.h: a small driver-like API used by callguard's tests and first demo.
 * toyCompile aborts when two threads are inside it at once on one device,
 * the way IGC 2.38.x aborted in zeModuleCreate; toyWait blocks like a wait
 * on an event; the rest are cheap calls. toyCompile_v2 and toyCompile_v2_ptds
 * are suffix variants, as a newer driver adds them (CUDA's _v2, _ptds), and
 * share toyCompile's race window; toyGetProcAddress is a small model of
 * cuGetProcAddress. */
#ifndef TOY_H
#define TOY_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TOY_APICALL __stdcall
#else
#define TOY_APICALL
#endif
#define TOY_API __attribute__((visibility("default")))

typedef enum toy_result {
    TOY_SUCCESS = 0,
    TOY_ERROR_INVALID_HANDLE = -1,
    TOY_ERROR_INVALID_VALUE = -2,
    TOY_ERROR_BUILD_FAILED = -3,
    TOY_ERROR_OUT_OF_RESOURCES = -4,
    TOY_ERROR_TIMEOUT = -5,
} toy_result_t;

typedef struct toy_device *toy_device_t;
typedef struct toy_program *toy_program_t;
typedef void(TOY_APICALL *toy_callback_t)(toy_device_t device, void *user);

typedef struct toy_stats {
    uint32_t compiles;   /* compiles that finished */
    uint32_t max_inside; /* most threads seen inside toyCompile at once, all devices */
} toy_stats_t;

TOY_API toy_result_t TOY_APICALL toyGetDevice(uint32_t index, toy_device_t *device);
/* Compiles `source`; sleeps `sleep_us` inside its race window. */
TOY_API toy_result_t TOY_APICALL toyCompile(toy_device_t device, const char *source, uint32_t sleep_us,
                                            toy_program_t *program);
TOY_API toy_result_t TOY_APICALL toyProgramRelease(toy_program_t program);
/* Blocks for `ms` milliseconds. */
TOY_API toy_result_t TOY_APICALL toyWait(toy_device_t device, uint32_t ms);
TOY_API toy_result_t TOY_APICALL toyAdd(int32_t a, int32_t b, int32_t *sum);
TOY_API int32_t TOY_APICALL toyNop(int32_t x);
TOY_API void TOY_APICALL toyTouch(const void *p);
/* Returns x at once: a launch (cuLaunchKernel) that would block only when the queue is full. */
TOY_API int32_t TOY_APICALL toyLaunch(int32_t x);
/* Calls `callback(device, user)` before returning. */
TOY_API toy_result_t TOY_APICALL toyRunCallback(toy_device_t device, toy_callback_t callback, void *user);
TOY_API toy_result_t TOY_APICALL toyGetStats(toy_stats_t *stats);
TOY_API toy_result_t TOY_APICALL toyResetStats(void);
TOY_API toy_result_t TOY_APICALL toySetDims(toy_device_t device, const uint32_t dims[3]);
/* Sets errno to `err` and returns `result`: errno and results through the layer. */
TOY_API toy_result_t TOY_APICALL toySetErrno(int32_t err, toy_result_t result);
/* toyCompile with flags (none defined: 0); the same compiler, so the same race. */
TOY_API toy_result_t TOY_APICALL toyCompile_v2(toy_device_t device, const char *source, uint32_t sleep_us,
                                               uint32_t flags, toy_program_t *program);
/* The same on the "per-thread default stream": a stacked suffix. */
TOY_API toy_result_t TOY_APICALL toyCompile_v2_ptds(toy_device_t device, const char *source, uint32_t sleep_us,
                                                    uint32_t flags, toy_program_t *program);
/* A name with a variant suffix whose base (toyQuery) the header does not declare. */
TOY_API toy_result_t TOY_APICALL toyQuery_v2(uint32_t *value);
/* The library's own function for `name` as of API `version`, like
 * cuGetProcAddress: from version 2 on, the _v2 variant where there is one
 * ("toyCompile" -> toyCompile_v2). An unknown name: TOY_ERROR_INVALID_VALUE
 * and *pfn = NULL. */
TOY_API toy_result_t TOY_APICALL toyGetProcAddress(const char *name, uint32_t version, void **pfn);

#ifdef __cplusplus
}
#endif
#endif
