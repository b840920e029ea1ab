/* The toy driver behind toy.h. */
#define _GNU_SOURCE
#include "toy.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOY_DEVICES 4

struct toy_device {
    atomic_int inside; /* threads inside toyCompile on this device */
};
struct toy_program {
    toy_device_t device;
};

static struct toy_device devices[TOY_DEVICES];
static atomic_int inside_all;
static atomic_uint max_inside;
static atomic_uint compiles;

static int valid(toy_device_t d) { return d >= devices && d < devices + TOY_DEVICES; }

static void sleep_us(uint32_t us)
{
    struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
}

toy_result_t toyGetDevice(uint32_t index, toy_device_t *device)
{
    if (!device) return TOY_ERROR_INVALID_VALUE;
    if (index >= TOY_DEVICES) return TOY_ERROR_INVALID_VALUE;
    *device = &devices[index];
    return TOY_SUCCESS;
}

/* toyCompile and its variants: one compiler, one race window. */
static toy_result_t compile(toy_device_t device, const char *source, uint32_t sleep, toy_program_t *program)
{
    if (!valid(device)) return TOY_ERROR_INVALID_HANDLE;
    if (!source || !program) return TOY_ERROR_INVALID_VALUE;
    /* The race window: a second thread inside on the same device corrupts
     * the "compiler", as IGC 2.38.x did. */
    if (atomic_fetch_add(&device->inside, 1) != 0) abort();
    unsigned all = (unsigned)atomic_fetch_add(&inside_all, 1) + 1;
    unsigned seen = atomic_load(&max_inside);
    while (all > seen && !atomic_compare_exchange_weak(&max_inside, &seen, all)) {}
    sleep_us(sleep);
    int bad = strstr(source, "error") != NULL;
    atomic_fetch_sub(&inside_all, 1);
    if (atomic_fetch_sub(&device->inside, 1) != 1) abort();
    if (bad) return TOY_ERROR_BUILD_FAILED;
    toy_program_t p = malloc(sizeof *p);
    if (!p) return TOY_ERROR_OUT_OF_RESOURCES;
    p->device = device;
    *program = p;
    atomic_fetch_add(&compiles, 1);
    return TOY_SUCCESS;
}

toy_result_t toyCompile(toy_device_t device, const char *source, uint32_t sleep, toy_program_t *program)
{
    return compile(device, source, sleep, program);
}

toy_result_t toyCompile_v2(toy_device_t device, const char *source, uint32_t sleep, uint32_t flags,
                           toy_program_t *program)
{
    if (flags != 0) return TOY_ERROR_INVALID_VALUE;
    return compile(device, source, sleep, program);
}

toy_result_t toyCompile_v2_ptds(toy_device_t device, const char *source, uint32_t sleep, uint32_t flags,
                                toy_program_t *program)
{
    if (flags != 0) return TOY_ERROR_INVALID_VALUE;
    return compile(device, source, sleep, program);
}

toy_result_t toyQuery_v2(uint32_t *value)
{
    if (!value) return TOY_ERROR_INVALID_VALUE;
    *value = 2;
    return TOY_SUCCESS;
}

/* The addresses handed out are the library's own (it is linked with
 * -Bsymbolic, as a driver binds its own names), never a layer's wrapper. */
toy_result_t toyGetProcAddress(const char *name, uint32_t version, void **pfn)
{
    static const struct {
        const char *name;
        void *v1, *v2;
    } table[] = {
        {"toyGetProcAddress", (void *)toyGetProcAddress, (void *)toyGetProcAddress},
        {"toyCompile", (void *)toyCompile, (void *)toyCompile_v2},
        {"toyAdd", (void *)toyAdd, (void *)toyAdd},
        {"toyNop", (void *)toyNop, (void *)toyNop},
        {"toyQuery", NULL, (void *)toyQuery_v2},
    };
    if (!pfn) return TOY_ERROR_INVALID_VALUE;
    *pfn = NULL;
    for (size_t i = 0; name && i < sizeof table / sizeof *table; i++)
        if (strcmp(table[i].name, name) == 0) *pfn = version >= 2 ? table[i].v2 : table[i].v1;
    return *pfn ? TOY_SUCCESS : TOY_ERROR_INVALID_VALUE;
}

toy_result_t toyProgramRelease(toy_program_t program)
{
    if (!program) return TOY_ERROR_INVALID_HANDLE;
    free(program);
    return TOY_SUCCESS;
}

toy_result_t toyWait(toy_device_t device, uint32_t ms)
{
    if (!valid(device)) return TOY_ERROR_INVALID_HANDLE;
    sleep_us(ms * 1000u);
    return TOY_SUCCESS;
}

toy_result_t toyAdd(int32_t a, int32_t b, int32_t *sum)
{
    if (!sum) return TOY_ERROR_INVALID_VALUE;
    *sum = (int32_t)((uint32_t)a + (uint32_t)b);
    return TOY_SUCCESS;
}

int32_t toyNop(int32_t x) { return x; }

int32_t toyLaunch(int32_t x) { return x; }

void toyTouch(const void *p) { (void)p; }

toy_result_t toySetErrno(int32_t err, toy_result_t result)
{
    errno = err;
    return result;
}

toy_result_t toyRunCallback(toy_device_t device, toy_callback_t callback, void *user)
{
    if (!valid(device) || !callback) return TOY_ERROR_INVALID_VALUE;
    callback(device, user);
    return TOY_SUCCESS;
}

toy_result_t toyGetStats(toy_stats_t *stats)
{
    if (!stats) return TOY_ERROR_INVALID_VALUE;
    stats->compiles = atomic_load(&compiles);
    stats->max_inside = atomic_load(&max_inside);
    return TOY_SUCCESS;
}

toy_result_t toyResetStats(void)
{
    atomic_store(&compiles, 0);
    atomic_store(&max_inside, 0);
    return TOY_SUCCESS;
}

toy_result_t toySetDims(toy_device_t device, const uint32_t dims[3])
{
    if (!valid(device) || !dims) return TOY_ERROR_INVALID_VALUE;
    return TOY_SUCCESS;
}
