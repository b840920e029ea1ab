/* zesim_out_of_resources_on_request: grf=N fails zeModuleCreate with ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY unless
 * the build flags' GRF mode gives N registers per thread (128; 256 with -cl-intel-256-GRF-per-thread or
 * -ze-opt-large-register-file), with a log naming the kernel; slm=N above the device's shared local memory fails
 * zeKernelCreate the same way and is localMemSize otherwise; both keys survive the native binary.
 *
 * With ZE_ENABLE_LOADER_INTERCEPT=1 a failed zeModuleCreate's log handle is the driver's raw one (bad_module.c
 * says why): that mode checks only the result codes. */
#include "zesim_test.h"

static ze_result_t build(struct sim *s, const char *spec, const char *flags, ze_module_handle_t *mod, char **text)
{
    uint8_t buf[128];
    const char *specs[] = {spec};
    size_t len = make_spirv(buf, sizeof buf, specs, 1);
    ze_module_desc_t md = {.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
                           .format = ZE_MODULE_FORMAT_IL_SPIRV,
                           .inputSize = len,
                           .pInputModule = buf,
                           .pBuildFlags = flags};
    ze_module_build_log_handle_t log = NULL;
    *mod = NULL;
    ze_result_t r = zeModuleCreate(s->context, s->device, &md, mod, &log);
    *text = NULL;
    if (r == ZE_RESULT_SUCCESS || !loader_intercepts()) *text = take_log(log);
    return r;
}

int main(void)
{
    struct sim s = sim_open();
    ze_module_handle_t mod;
    char *text;

    CHECK_ZE(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, build(&s, "fat:grf=200", "-cl-fast-relaxed-math", &mod, &text));
    CHECK(mod == NULL);
    CHECK(!text || strstr(text, "kernel fat needs 200 registers per thread; the GRF mode of this build gives 128"));
    free(text);
    CHECK_ZE(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
             build(&s, "fat:grf=200", "-cl-intel-128-GRF-per-thread", &mod, &text));
    free(text);
    /* a flag that only contains the large-GRF one as a prefix is not it */
    CHECK_ZE(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
             build(&s, "fat:grf=200", "-cl-intel-256-GRF-per-thread-not", &mod, &text));
    free(text);
    CHECK_ZE(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
             build(&s, "fat:grf=300", "-cl-intel-256-GRF-per-thread", &mod, &text));
    CHECK(!text || strstr(text, "needs 300 registers per thread; the GRF mode of this build gives 256"));
    free(text);

    OK(build(&s, "fat:args=1:grf=200:slm=131072", "-O2 -ze-opt-large-register-file", &mod, &text));
    free(text);
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "fat"};
    ze_kernel_handle_t k = NULL;
    CHECK_ZE(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, zeKernelCreate(mod, &kd, &k));

    /* The native binary keeps both keys: the kernel still needs more shared memory than there is. */
    size_t size = 0;
    OK(zeModuleGetNativeBinary(mod, &size, NULL));
    uint8_t *native = malloc(size);
    CHECK(native);
    OK(zeModuleGetNativeBinary(mod, &size, native));
    CHECK(memmem(native, size, ":grf=200:slm=131072", 19) != NULL);
    OK(zeModuleDestroy(mod));
    ze_module_handle_t loaded;
    ze_module_build_log_handle_t log;
    OK(create_module(&s, ZE_MODULE_FORMAT_NATIVE, native, size, &loaded, &log));
    free(take_log(log));
    CHECK_ZE(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, zeKernelCreate(loaded, &kd, &k));
    OK(zeModuleDestroy(loaded));
    free(native);

    OK(build(&s, "small:slm=32768", "", &mod, &text));
    free(text);
    kd.pKernelName = "small";
    OK(zeKernelCreate(mod, &kd, &k));
    ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
    OK(zeKernelGetProperties(k, &kp));
    CHECK(kp.localMemSize == 32768);
    OK(zeKernelDestroy(k));
    OK(zeModuleDestroy(mod));
    sim_close(&s);
    puts("ok");
    return 0;
}
