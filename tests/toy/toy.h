/* toy.h: a small driver-like API used by callguard's tests and first demo.
 * toyCompile aborts when two threads are inside it at once on one device,
 * the way IGC 2.38.x aborted in zeModuleCreate; toyWait blocks like a wait
 * on an event; the rest are cheap calls. */
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
    uint32_t compiles;          /* compiles that finished */
    uint32_t max_inside;        /* most threads seen inside toyCompile at once, all devices */
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
/* Calls `callback(device, user)` before returning. */
TOY_API toy_result_t TOY_APICALL toyRunCallback(toy_device_t device, toy_callback_t callback, void *user);
TOY_API toy_result_t TOY_APICALL toyGetStats(toy_stats_t *stats);
TOY_API toy_result_t TOY_APICALL toyResetStats(void);
TOY_API toy_result_t TOY_APICALL toySetDims(toy_device_t device, const uint32_t dims[3]);

#ifdef __cplusplus
}
#endif
#endif
