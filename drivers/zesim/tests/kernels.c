/* zesim_kernel_names_and_properties: kernel names from the module input, kernel creation, properties (spill,
 * private memory, argument count), argument and group size checks, and real SPIR-V OpEntryPoint names. */
#include "zesim_test.h"

static void put_word(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

/* Kernel names and the build log's figures come from the simulator's module input. */
static ze_module_handle_t names_from_specs(struct sim *s)
{
    const char *specs[] = {"copy:args=2", "spilly:args=1:spill=4096:private=128:regs=256", "noargs"};
    uint8_t buf[256];
    size_t len = make_spirv(buf, sizeof buf, specs, 3);
    ze_module_handle_t mod;
    ze_module_build_log_handle_t log;
    OK(create_module(s, ZE_MODULE_FORMAT_IL_SPIRV, buf, len, &mod, &log));
    char *text = take_log(log);
    CHECK(strstr(text, "kernel spilly: 1 args, 256 registers, 4096 bytes spill, 128 bytes private") != NULL);
    free(text);

    uint32_t count = 0;
    OK(zeModuleGetKernelNames(mod, &count, NULL));
    CHECK(count == 3);
    const char *names[3];
    OK(zeModuleGetKernelNames(mod, &count, names));
    CHECK(strcmp(names[0], "copy") == 0 && strcmp(names[1], "spilly") == 0 && strcmp(names[2], "noargs") == 0);
    return mod;
}

/* A kernel of the spec's figures: properties, name, argument and group size checks. */
static void kernel_properties_and_checks(ze_module_handle_t mod)
{
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "nope"};
    ze_kernel_handle_t k;
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_KERNEL_NAME, zeKernelCreate(mod, &kd, &k));

    kd.pKernelName = "spilly";
    OK(zeKernelCreate(mod, &kd, &k));
    ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    OK(zeKernelGetProperties(k, &kp));
    CHECK(kp.numKernelArgs == 1 && kp.spillMemSize == 4096 && kp.privateMemSize == 128);

    size_t name_size = 0;
    OK(zeKernelGetName(k, &name_size, NULL));
    CHECK(name_size == strlen("spilly") + 1);
    char name[16];
    OK(zeKernelGetName(k, &name_size, name));
    CHECK(strcmp(name, "spilly") == 0);

    uint64_t value = 7;
    OK(zeKernelSetArgumentValue(k, 0, sizeof value, &value));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, zeKernelSetArgumentValue(k, 1, sizeof value, &value));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, zeKernelSetArgumentValue(k, 0, 0, &value));
    OK(zeKernelSetGroupSize(k, 64, 2, 1));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(k, 0, 1, 1));
    CHECK_ZE(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION, zeKernelSetGroupSize(k, 1024, 2, 1));
    uint32_t gx, gy, gz;
    OK(zeKernelSuggestGroupSize(k, 1000, 1, 1, &gx, &gy, &gz));
    CHECK(1000 % gx == 0 && gx <= 256);

    /* A module with live kernels cannot be destroyed. */
    CHECK_ZE(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, zeModuleDestroy(mod));
    OK(zeKernelDestroy(k));
}

/* Real SPIR-V: header, OpEntryPoint Kernel %1 "vadd", OpFunction %void %1, two OpFunctionParameters.
 * Returns its length in bytes. */
static size_t vadd_spirv(uint8_t spv[4 * 32])
{
    uint32_t w = 0;
    put_word(spv + 4 * w++, 0x07230203u);
    put_word(spv + 4 * w++, 0x00010200u); /* version 1.2 */
    put_word(spv + 4 * w++, 0);
    put_word(spv + 4 * w++, 10);
    put_word(spv + 4 * w++, 0);
    put_word(spv + 4 * w++, (5u << 16) | 15u); /* OpEntryPoint: model, id, "vadd\0" padded to 2 words */
    put_word(spv + 4 * w++, 6);                /* Kernel */
    put_word(spv + 4 * w++, 1);
    memcpy(spv + 4 * w, "vadd", 4);
    w += 2;
    put_word(spv + 4 * w++, (5u << 16) | 54u); /* OpFunction result-type result-id control type */
    put_word(spv + 4 * w++, 2);
    put_word(spv + 4 * w++, 1);
    put_word(spv + 4 * w++, 0);
    put_word(spv + 4 * w++, 3);
    for (int p = 0; p < 2; p++) {
        put_word(spv + 4 * w++, (3u << 16) | 55u); /* OpFunctionParameter */
        put_word(spv + 4 * w++, 4);
        put_word(spv + 4 * w++, 5u + (uint32_t)p);
    }
    put_word(spv + 4 * w++, (1u << 16) | 56u); /* OpFunctionEnd */
    return 4 * w;
}

/* Real SPIR-V's OpEntryPoint names its kernel, and its parameters are counted. */
static void names_from_real_spirv(struct sim *s)
{
    uint8_t spv[4 * 32] = {0};
    size_t len = vadd_spirv(spv);
    ze_module_handle_t mod;
    OK(create_module(s, ZE_MODULE_FORMAT_IL_SPIRV, spv, len, &mod, NULL));
    uint32_t count = 1;
    const char *names[3];
    OK(zeModuleGetKernelNames(mod, &count, names));
    CHECK(count == 1 && strcmp(names[0], "vadd") == 0);
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "vadd"};
    ze_kernel_handle_t k;
    OK(zeKernelCreate(mod, &kd, &k));
    ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    OK(zeKernelGetProperties(k, &kp));
    CHECK(kp.numKernelArgs == 2);
    OK(zeKernelDestroy(k));
    OK(zeModuleDestroy(mod));
}

int main(void)
{
    struct sim s = sim_open();
    ze_module_handle_t mod = names_from_specs(&s);
    kernel_properties_and_checks(mod);
    OK(zeModuleDestroy(mod));
    names_from_real_spirv(&s);
    sim_close(&s);
    puts("ok");
    return 0;
}
