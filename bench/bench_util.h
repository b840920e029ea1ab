/* bench_util.h: what the benchmarks share besides callgrind's requests
 * (bench_callgrind.h): finding the function a loop calls, and saying which
 * object it is in, and the median of a run's rounds. Used by bench_call.c and bench_contention.c. */
#ifndef CG_BENCH_UTIL_H
#define CG_BENCH_UTIL_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file name (no folder) of the object that defines p, or "?". */
static inline const char *cg_bench_object_of(const void *p)
{
    Dl_info info;
    if (!dladdr(p, &info) || !info.dli_fname) return "?";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

/* NAME as the already loaded SONAME resolves it; it must be defined in
 * MUST_LAND_IN (a file name), else PROG says where it landed and exits 1:
 * a benchmark of the wrong function measures nothing. */
static inline void *cg_bench_lookup(const char *prog, const char *soname, const char *name, const char *must_land_in)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
    void *fn = h ? dlsym(h, name) : NULL;
    if (!fn || strcmp(cg_bench_object_of(fn), must_land_in) != 0) {
        fprintf(stderr, "%s: %s from %s lands in %s, expected %s\n", prog, name, soname,
                fn ? cg_bench_object_of(fn) : "nothing", must_land_in);
        exit(1);
    }
    return fn;
}

static inline int cg_bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (n odd: one of them); sorts v. */
static inline double cg_bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cg_bench_cmp_double);
    return v[n / 2];
}

#endif
