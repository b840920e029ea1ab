/* The names of a process's Python threads, as `threading` knows them, and
 * the standard library's folder, read from the interpreter's memory
 * (pynames.c) the way pyread.h reads frames: no GIL, no CPython call, no
 * fault on a stale pointer (selfread.h), nothing allocated, every loop
 * bounded, every object's type checked before it is believed.
 *
 * From an interpreter's sys.modules (its `modules`) to the `threading`
 * module, its `_active` dict ({ident: Thread}), and each Thread's `_name`
 * and `_native_id`, read from the instance's attributes: a dict at
 * tp_dictoffset (3.9, 3.10), values kept apart from a managed dict (3.11),
 * a tagged dict-or-values pointer (3.12), inline values (3.13). Layouts
 * from pynames_offsets.h (scripts/pyoffsets.py --names), 3.9-3.13; any
 * other version names no thread (the caller falls back to the OS thread's
 * name: 3.14 sets it from threading's). */
#ifndef CGI_PYNAMES_H
#define CGI_PYNAMES_H

#include "internal.h"

#include <sys/types.h>

/* Looks up the types the reads check against (dlsym: the loader's lock).
 * Called by cgi_pyread_prepare, on a program's thread, once it knows the
 * version. */
CGI_HIDDEN void cgi_pynames_prepare(int minor);

typedef struct cgi_pyname {
    unsigned long ident; /* threading's ident: the thread's pthread_self() */
    pid_t native_id;     /* Thread._native_id; 0: not known */
    char name[64];       /* Thread._name (its tail after "..." where longer) */
} cgi_pyname;

/* The threads of interpreter `interp` (a cgi_pythread's) that its
 * threading._active holds: at most `max` into `out`, their number into
 * *n; and the folder of threading's file (the standard library's) into
 * stdlib ("" when not known). 0, or -1 where none could be read (no
 * threading module imported: no thread of threading's). Within a series
 * of reads the caller began (cgi_selfread_begin). */
CGI_HIDDEN int cgi_pynames_read(uintptr_t interp, cgi_pyname *out, int max, int *n, char *stdlib, size_t cap);

#endif
