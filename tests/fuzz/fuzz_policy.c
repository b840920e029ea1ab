/* The policy reader (src/policy/policy_ini.c) on any bytes: it returns an
 * error or a checked file, and never reads past a buffer, leaks or hangs. */
#include "fuzz_input.h"
#include "policy_ini.h"

#include <string.h>

static int on_section(pini_file *f, const pini_section *s, void *user)
{
    (void)f;
    /* Touch every value the reader hands over. */
    size_t *n = user;
    *n += strlen(s->name);
    for (int k = 0; k < PINI_NKEYS; k++)
        if (s->value[k]) *n += strlen(s->value[k]) + (size_t)pini_word((pini_key)k, s->value[k]);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_file(data, size, path, sizeof path);
    size_t n = 0;
    int rc = pini_read(path, on_section, &n, err, sizeof err);
    if (rc != PINI_OK && (!err[0] || strchr(err, '\n'))) abort(); /* an error is one line */
    close(fd);
    return 0;
}
