/* The parsers of CALLGUARD_* values, through cg_configure (the same code
 * reads the environment at start-up): the first byte picks the variable,
 * the rest is its value. Every result is CG_OK, CG_PENDING or an error
 * with a one-line message. */
#include "fuzz_input.h"

#include <callguard/callguard.h>
#include <string.h>

static const char *const vars[] = {
    "CALLGUARD_SERIALIZE",   "CALLGUARD_TRANSITION", "CALLGUARD_RUNTIME", "CALLGUARD_STALL_MS",
    "CALLGUARD_TOY_LIBRARY", "CALLGUARD_STATS_DIR",  "CALLGUARD_NOPE",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096) return 0;
    char *value = strndup((const char *)data + 1, size - 1);
    if (!value) return 0;
    const char *var = vars[data[0] % (sizeof vars / sizeof *vars)];
    int rc = cg_configure(var, value);
    if (rc != CG_OK && rc != CG_PENDING && strchr(cg_last_error(), '\n')) abort();
    if (rc == CG_OK && strcmp(var, "CALLGUARD_SERIALIZE") == 0) cg_serialize(value, NULL, CG_SCOPE_PROCESS);
    free(value);
    return 0;
}
