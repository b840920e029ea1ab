/* A small test runner: each test is a function named for the behaviour it
 * checks; ctest runs `cgtest NAME`. Tests that need a fresh process (one
 * that may die of a signal, or that reads the environment at start-up) run
 * this same binary again as a child with `cgtest --child NAME ...`: a fork
 * without exec would inherit the parent's state and, under ThreadSanitizer,
 * may not start threads. A case named child_... is such a child's part, not
 * a test: `cgtest --list` leaves it out, and ctest registers every case it
 * lists (tests/cgtest.cmake), so a test is its function and its line in
 * cgtest_cases[]. */
#ifndef CGTEST_H
#define CGTEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*cgtest_fn)(int argc, char **argv);

typedef struct cgtest_case {
    const char *name;
    cgtest_fn fn;
} cgtest_case;

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                                   \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

#define CHECKF(cond, ...)                                                                                              \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                                   \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

typedef struct cgtest_result {
    int status;     /* raw wait status */
    char out[8192]; /* stdout */
    char err[8192]; /* stderr */
} cgtest_result;

/* Runs `cgtest --child NAME ARGS...` with extra environment entries
 * ("VAR=value", or "VAR" to remove it), NULL-terminated lists. */
int cgtest_child(cgtest_result *r, const char *const *env, const char *name, const char *const *args);
/* Runs an arbitrary program the same way. */
int cgtest_run(cgtest_result *r, const char *const *env, const char *const *argv);
double cgtest_now(void);
void cgtest_sleep_ms(unsigned ms);
/* A temporary directory for this test, created on first use. */
const char *cgtest_tmpdir(void);
/* Writes TEXT to the file NAME in cgtest_tmpdir(); returns its path, in a
 * buffer the next call reuses. */
const char *cgtest_write_file(const char *name, const char *text);
/* The whole file, NUL-terminated, in memory the caller frees (its length
 * in *len when len is not NULL); NULL when it cannot be read whole. */
char *cgtest_read_file(const char *path, size_t *len);

#endif
