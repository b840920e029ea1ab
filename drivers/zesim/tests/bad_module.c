/* zesim_bad_module_fails_with_build_log: inputs that are not simulator SPIR-V / native binaries fail with the spec's
 * error code and a build log explaining why.
 *
 * With ZE_ENABLE_LOADER_INTERCEPT=1 the 1.8.12 loader does not wrap the build log handle when zeModuleCreate fails
 * (it returns before converting handles), so the application receives the driver's raw handle, which the loader
 * cannot dispatch; that mode checks only the error codes. */
#include "zesim_test.h"

static char *expect_failure(struct sim *s, ze_module_format_t format, const void *data, size_t size,
                            ze_result_t expected)
{
    ze_module_handle_t mod = NULL;
    ze_module_build_log_handle_t log = NULL;
    CHECK_ZE(expected, create_module(s, format, data, size, &mod, &log));
    CHECK(log != NULL);
    if (loader_intercepts()) return NULL; /* the unwrapped log handle is unusable through the loader; it leaks */
    char *text = take_log(log);
    fprintf(stderr, "log: %s", text);
    return text;
}

int main(void)
{
    struct sim s = sim_open();

    const char not_spirv[] = "this is OpenCL C, not SPIR-V";
    char *text = expect_failure(&s, ZE_MODULE_FORMAT_IL_SPIRV, not_spirv, sizeof not_spirv,
                                ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    CHECK(text == NULL || strstr(text, "SPIR-V magic") != NULL);
    free(text);

    /* The magic is right but what follows is neither real SPIR-V nor kernel names. */
    const uint8_t garbage[] = {0x03, 0x02, 0x23, 0x07, 'o', 'k', 0, 0x7f, 0x80, 0};
    text = expect_failure(&s, ZE_MODULE_FORMAT_IL_SPIRV, garbage, sizeof garbage, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    CHECK(text == NULL || strstr(text, "not printable") != NULL);
    free(text);

    const uint8_t bad_attr[] = "\x03\x02\x23\x07k:colour=blue";
    text =
        expect_failure(&s, ZE_MODULE_FORMAT_IL_SPIRV, bad_attr, sizeof bad_attr, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    CHECK(text == NULL || strstr(text, "bad attribute") != NULL);
    free(text);

    const uint8_t dup[] = "\x03\x02\x23\x07k\0k";
    text = expect_failure(&s, ZE_MODULE_FORMAT_IL_SPIRV, dup, sizeof dup, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    CHECK(text == NULL || strstr(text, "defined twice") != NULL);
    free(text);

    const char not_native[] = "ELF? no.";
    text = expect_failure(&s, ZE_MODULE_FORMAT_NATIVE, not_native, sizeof not_native,
                          ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
    CHECK(text == NULL || strstr(text, "CGSIMBIN") != NULL);
    free(text);

    const uint8_t truncated[] = {'C', 'G', 'S', 'I', 'M', 'B', 'I', 'N', 1, 0, 0, 0, 2, 0, 0, 0, 'a', 0};
    text =
        expect_failure(&s, ZE_MODULE_FORMAT_NATIVE, truncated, sizeof truncated, ZE_RESULT_ERROR_INVALID_NATIVE_BINARY);
    CHECK(text == NULL || strstr(text, "corrupt") != NULL);
    free(text);

    /* Without a build log handle the error code is the same. */
    ze_module_handle_t mod;
    CHECK_ZE(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE,
             create_module(&s, ZE_MODULE_FORMAT_IL_SPIRV, (const uint8_t *)not_spirv, sizeof not_spirv, &mod, NULL));

    sim_close(&s);
    puts("ok");
    return 0;
}
