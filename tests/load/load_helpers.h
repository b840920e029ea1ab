/* What the runners of the module loader's tests share (test_load_ze.c,
 * test_load_cache.c, test_load_cl.c, test_load_cuda.c). Each behaviour runs
 * in fresh processes of a worker program (worker_ze.c, worker_cl.c,
 * worker_cuda.c) that prints its figures as key=value; paths come from the
 * environment ctest sets (tests/load/CMakeLists.txt). */
#ifndef LOAD_HELPERS_H
#define LOAD_HELPERS_H

#include "../cgtest.h"

/* The value of key=... in text (0 if absent); -1 when the key is missing. */
long long figure(const char *text, const char *key);
int count_lines(const char *text, const char *needle);
int exited_ok(const cgtest_result *r);
/* The worker program the environment variable var names; exits 2 without it. */
const char *worker(const char *var);
/* A fresh cache directory for this test: "CALLGUARD_CACHE_DIR=...", valid until the next call. */
const char *fresh_cache(const char *name);
/* Runs a worker (`MODE THREADS KERNELS`) and prints what it said on stderr. */
int run_ze(cgtest_result *r, const char *const *env, const char *mode, const char *threads, const char *kernels);
int run_cl(cgtest_result *r, const char *const *env, const char *mode, const char *threads, const char *kernels);
typedef int (*load_run)(cgtest_result *r, const char *const *env, const char *mode, const char *threads,
                        const char *kernels);
/* The paths of dir's entries (no dot files), at most max; returns how many. */
int entries(const char *dir, char names[][700], int max);
/* The only entry of a one-kernel run, in path. */
int only_entry(const char *dir, char *path);

/* ---- damaged cache entries ---- */
/* A way a disk cache entry is damaged, and how the load names it on stderr. */
typedef struct entry_damage {
    const char *said;
    int (*apply)(const char *path); /* 0 when done */
} entry_damage;
enum { DAMAGE_FLIPPED_BYTE, DAMAGE_TRUNCATED, DAMAGE_WRAPPING_LENGTHS, DAMAGE_FIFO, DAMAGE_HUGE_GARBAGE };
extern const entry_damage entry_damages[];

/* Four kernels loaded into a fresh cache by `run` (MODE 4 4); a byte of one
 * entry flipped and another truncated: the next process reports both once,
 * rebuilds and replaces them (its run in *second), and the one after hits
 * all four. */
int two_damaged_entries_are_rebuilt(load_run run, const char *const *env, const char *mode, cgtest_result *second);
/* One kernel loaded into a fresh cache on Level Zero, its entry (path) then
 * damaged as `d` says: the next process (killed after 60 s if the entry
 * makes it wait) loads the kernel, names the entry once as d->said, and
 * rebuilds it. The runs in *first and *second. */
int damaged_entry_is_rebuilt(const entry_damage *d, cgtest_result *first, cgtest_result *second, char *path);

#endif
