/* acme.c: libacme.so.1 (see acme.h). acmeCompile counts the threads inside
 * it; with ACME_INIT_ABORT_ON_CONCURRENT_COMPILE a second one aborts the
 * process, as Intel's graphics compiler did in zeModuleCreate. */
#define _GNU_SOURCE
#include "acme.h"
#include "acme_ext.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct acme_program {
    int length;
};

static atomic_uint init_flags;
static atomic_int initialized;
static atomic_int inside_compile;

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {}
}

acme_result_t acmeInit(unsigned flags)
{
    if (flags & ~ACME_INIT_ABORT_ON_CONCURRENT_COMPILE) return ACME_ERROR_INVALID_VALUE;
    atomic_store(&init_flags, flags);
    atomic_store(&initialized, 1);
    return ACME_SUCCESS;
}

acme_result_t acmeCompile(const char *source, acme_program_t *program)
{
    if (!atomic_load(&initialized)) return ACME_ERROR_NOT_INITIALIZED;
    if (!source || !program) return ACME_ERROR_INVALID_VALUE;
    int inside = atomic_fetch_add(&inside_compile, 1) + 1;
    /* The work, in 1 ms steps, watching for a second thread all along. */
    for (int ms = 0; ms < 50; ms++) {
        if (inside > 1 && (atomic_load(&init_flags) & ACME_INIT_ABORT_ON_CONCURRENT_COMPILE)) {
            fprintf(stderr, "acme: %d threads inside acmeCompile at once\n", inside);
            abort();
        }
        sleep_ms(1);
        inside = atomic_load(&inside_compile);
    }
    acme_program_t p = malloc(sizeof *p);
    if (p) p->length = (int)strlen(source);
    atomic_fetch_sub(&inside_compile, 1);
    if (!p) return ACME_ERROR_UNAVAILABLE;
    *program = p;
    return ACME_SUCCESS;
}

acme_result_t acmeRun(acme_program_t program, int input, int *output)
{
    if (!program || !output) return ACME_ERROR_INVALID_VALUE;
    *output = input + program->length;
    return ACME_SUCCESS;
}

acme_result_t acmeWait(unsigned milliseconds)
{
    if (!atomic_load(&initialized)) return ACME_ERROR_NOT_INITIALIZED;
    sleep_ms(milliseconds);
    return ACME_SUCCESS;
}

acme_result_t acmeRelease(acme_program_t program)
{
    if (!program) return ACME_ERROR_INVALID_VALUE;
    free(program);
    return ACME_SUCCESS;
}

const char *acmeGetBuildInfo(void) { return "acme 1.0.0"; }
