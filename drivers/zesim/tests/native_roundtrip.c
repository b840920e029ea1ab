/* zesim_native_binary_loads_fast: zeModuleGetNativeBinary output loads back as ZE_MODULE_FORMAT_NATIVE without
 * the compile delay (CGSIM_COMPILE_MS=300 in this test) and keeps kernel names and figures. */
#include "zesim_test.h"

int main(void)
{
    struct sim s = sim_open();
    const char *specs[] = {"alpha:args=2:spill=64", "beta:private=32:regs=256"};
    uint8_t buf[256];
    size_t len = make_spirv(buf, sizeof buf, specs, 2);
    ze_module_handle_t mod;
    OK(create_module(&s, ZE_MODULE_FORMAT_IL_SPIRV, buf, len, &mod, NULL));

    size_t size = 0;
    OK(zeModuleGetNativeBinary(mod, &size, NULL));
    CHECK(size > 8);
    uint8_t *native = malloc(size);
    CHECK(native);
    OK(zeModuleGetNativeBinary(mod, &size, native));
    CHECK(memcmp(native, "CGSIMBIN", 8) == 0);
    OK(zeModuleDestroy(mod));

    ze_module_handle_t loaded;
    ze_module_build_log_handle_t log;
    double t0 = now_ms();
    OK(create_module(&s, ZE_MODULE_FORMAT_NATIVE, native, size, &loaded, &log));
    double took = now_ms() - t0;
    fprintf(stderr, "native load took %.1f ms\n", took);
    CHECK(took < 100);
    free(take_log(log));

    uint32_t count = 0;
    OK(zeModuleGetKernelNames(loaded, &count, NULL));
    CHECK(count == 2);
    const char *names[2];
    OK(zeModuleGetKernelNames(loaded, &count, names));
    CHECK(strcmp(names[0], "alpha") == 0 && strcmp(names[1], "beta") == 0);

    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "alpha"};
    ze_kernel_handle_t k;
    OK(zeKernelCreate(loaded, &kd, &k));
    ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    OK(zeKernelGetProperties(k, &kp));
    CHECK(kp.numKernelArgs == 2 && kp.spillMemSize == 64);
    OK(zeKernelDestroy(k));
    OK(zeModuleDestroy(loaded));
    free(native);
    sim_close(&s);
    puts("ok");
    return 0;
}
