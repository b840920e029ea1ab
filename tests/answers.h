/* answers.h: the two builds of a test program that prints what a vendor library answers, one line per
 * call (tests/hip/answers.c, tests/nccl/answers.c). Linked to the library, CALL(name) is the function;
 * built with CG_ANSWERS_DLOPEN, the program opens the soname or path given as argument 1 and CALL(name)
 * looks each name up on that handle, as the loaders of Triton, CuPy and PyTorch do (a preloaded layer
 * never sees those calls: only a soname shim does). */
#ifndef CG_ANSWERS_H
#define CG_ANSWERS_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef CG_ANSWERS_DLOPEN
static void *cg_answers_lib;
static void *cg_answers_must(const char *name)
{
    void *f = dlsym(cg_answers_lib, name);
    if (!f) {
        fprintf(stderr, "answers: %s: %s\n", name, dlerror());
        exit(1);
    }
    return f;
}
#define CALL(name) ((__typeof__(&name))cg_answers_must(#name))
#else
#define CALL(name) name
#endif

/* Opens the library of the dlopen build (exit status 2 when it cannot); nothing in the linked one. */
static inline void cg_answers_open(int argc, char **argv)
{
#ifdef CG_ANSWERS_DLOPEN
    if (argc < 2 || !(cg_answers_lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL))) {
        fprintf(stderr, "answers: usage: answers SONAME (%s)\n", argc < 2 ? "no SONAME" : dlerror());
        exit(2);
    }
#else
    (void)argc, (void)argv;
#endif
}

#endif
