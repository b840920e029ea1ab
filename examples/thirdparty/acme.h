/* acme.h: the API of libacme.so.1, a tiny accelerator library standing in
 * for a third party's own API in callguard's third-party example
 * (docs/thirdparty.md). Like a real driver it has a compile that is not safe
 * to enter from two threads at once, and a call that blocks. */
#ifndef ACME_H
#define ACME_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum acme_result {
    ACME_SUCCESS = 0,
    ACME_ERROR_INVALID_VALUE = 1,
    ACME_ERROR_NOT_INITIALIZED = 2,
    ACME_ERROR_UNAVAILABLE = 3, /* what callguard's layer returns when it cannot find libacme */
} acme_result_t;

typedef struct acme_program *acme_program_t;

/* acmeInit flag: abort the process when a second thread enters acmeCompile
 * while another is still inside it (the driver bug callguard serializes). */
#define ACME_INIT_ABORT_ON_CONCURRENT_COMPILE 1u

acme_result_t acmeInit(unsigned flags);
/* Compiles `source` (about 50 ms of work); `*program` adds its length to an input. */
acme_result_t acmeCompile(const char *source, acme_program_t *program);
/* Runs `program` on `input`: cheap, safe from any thread. */
acme_result_t acmeRun(acme_program_t program, int input, int *output);
/* Blocks for `milliseconds`, like a wait for the device. */
acme_result_t acmeWait(unsigned milliseconds);
acme_result_t acmeRelease(acme_program_t program);

#ifdef __cplusplus
}
#endif
#endif
