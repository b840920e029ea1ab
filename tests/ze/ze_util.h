/* Level Zero helpers shared by the scenario programs: open the simulator's
 * device through whatever provides the ze* names (the real loader, or
 * libcallguard_ze.so linked in its place), and exit with a message naming
 * the call on any unexpected result. */
#ifndef CG_ZE_UTIL_H
#define CG_ZE_UTIL_H

#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZE_OK(call)                                                                                                    \
    do {                                                                                                               \
        ze_result_t r_ = (call);                                                                                       \
        if (r_ != ZE_RESULT_SUCCESS) {                                                                                 \
            fprintf(stderr, "%s:%d: %s returned 0x%x\n", __FILE__, __LINE__, #call, (unsigned)r_);                     \
            exit(3);                                                                                                   \
        }                                                                                                              \
    } while (0)

typedef struct ze_sim {
    ze_driver_handle_t driver;
    ze_device_handle_t device;
    ze_context_handle_t context;
} ze_sim;

static inline ze_sim ze_sim_open(void)
{
    ze_sim s = {0};
    ZE_OK(zeInit(0));
    uint32_t n = 1;
    ZE_OK(zeDriverGet(&n, &s.driver));
    n = 1;
    ZE_OK(zeDeviceGet(s.driver, &n, &s.device));
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ZE_OK(zeContextCreate(s.driver, &cd, &s.context));
    return s;
}

/* A module in the simulator's test convention (docs/zesim.md): SPIR-V magic,
 * then one kernel spec; zeModuleCreate "compiles" it for CGSIM_COMPILE_MS. */
static inline ze_result_t ze_sim_compile(const ze_sim *s, ze_module_handle_t *module)
{
    static const char input[] = "\x03\x02\x23\x07"
                                "k:args=1\0";
    ze_module_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                             .format = ZE_MODULE_FORMAT_IL_SPIRV,
                             .inputSize = sizeof input,
                             .pInputModule = (const uint8_t *)input};
    return zeModuleCreate(s->context, s->device, &desc, module, NULL);
}

#endif
