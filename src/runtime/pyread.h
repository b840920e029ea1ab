/* Another thread's Python frames, read without the GIL and without calling
 * CPython (pyread.c).
 *
 * For a thread blocked in a native call: its thread state is found in the
 * interpreters' thread lists (from _PyRuntime), then its frame chain is
 * read and each frame's line decoded from its code object's line table.
 * Every read of the interpreter's memory goes through selfread.h
 * (process_vm_readv on this process, or pread on /proc/self/mem where that
 * is refused or a seccomp filter is present), so a stale or torn pointer
 * gives a failed read, never a fault. Nothing is allocated, no lock taken,
 * no CPython function called: cgi_pyread_frames is async-signal-safe and
 * may run while the GIL is held by anyone (it opens /proc/self/mem or
 * /proc/thread-self/status with open(2) and fcntl(2), async-signal-safe
 * both). Layouts: 3.9-3.12 from a table generated from each version's
 * headers (scripts/pyoffsets.py, pyread_offsets.h); 3.13 and 3.14 from the
 * _Py_DebugOffsets CPython keeps at the start of _PyRuntime, its fields found
 * by name (scripts/pyoffsets.py --debug, pyread_debug.h). Anything else
 * is "unknown" (CGI_PYREAD_UNSUPPORTED), never a guess. */
#ifndef CGI_PYREAD_H
#define CGI_PYREAD_H

#include "internal.h"

#include <sys/types.h>

#define CGI_PYREAD_FILE 256 /* a longer path keeps its tail, after "..." */
#define CGI_PYREAD_NAME 96

typedef struct cgi_pyframe {
    int line; /* -1: the line table gives this instruction no line */
    char file[CGI_PYREAD_FILE];
    char function[CGI_PYREAD_NAME]; /* the code object's co_name */
} cgi_pyframe;

typedef enum cgi_pyread_result {
    CGI_PYREAD_OK = 0,          /* *n frames, innermost first (0: the thread is in no Python code) */
    CGI_PYREAD_NO_PYTHON = 1,   /* no CPython in this process */
    CGI_PYREAD_UNSUPPORTED = 2, /* a version or build whose layout is not known here */
    CGI_PYREAD_NO_ACCESS = 3,   /* neither way of selfread.h is open (process_vm_readv refused, no /proc) */
    CGI_PYREAD_NO_THREAD = 4,   /* no thread state for that thread: a C thread, or it ended */
    CGI_PYREAD_CHANGED = 5,     /* a read failed or a check did not hold: the memory moved */
    CGI_PYREAD_NOT_READY = 6,   /* cgi_pyread_prepare has not succeeded */
} cgi_pyread_result;

/* Looks up _PyRuntime, the version (Py_Version from 3.11; Py_GetVersion()
 * before, its one CPython call) and the type objects the reads check
 * against (dlsym, dladdr: the loader's lock). Call it from a thread that may
 * take that lock (a guarded call's own thread, never the watchdog); again
 * later if it said NO_PYTHON and libpython may have been loaded since.
 * Returns a cgi_pyread_result; OK once the reader can be used. */
CGI_HIDDEN int cgi_pyread_prepare(void);

/* The Python frames of the thread whose gettid() is `tid` and whose
 * pthread_self() is `pthread_id` (3.9 and 3.10 keep only the latter; 3.11+
 * match the former when it is not 0). Writes at most `max` frames into
 * `out`, their number into *n (0 unless OK), and returns a
 * cgi_pyread_result. Meant for a thread that stays inside a native call
 * while it is read; one that moves on gives CHANGED or frames that were
 * right while it was read. */
CGI_HIDDEN int cgi_pyread_frames(pid_t tid, unsigned long pthread_id, cgi_pyframe *out, int max, int *n);

/* Does the thread whose gettid() is `tid` (pthread_self() `pthread_id` on
 * 3.9 and 3.10) hold the GIL of its interpreter now? 1 or 0, read from the
 * GIL's state the way cgi_pyread_frames reads frames; -1 when it cannot be
 * told (a version whose GIL is not placed here: 3.14+, a lock that moved
 * while read). For a thread that stays inside a native call. */
CGI_HIDDEN int cgi_pyread_gil_held(pid_t tid, unsigned long pthread_id);

/* A thread state of an interpreter, as cgi_pyread_threads lists it. */
typedef struct cgi_pythread {
    uintptr_t ts, interp; /* where its thread state and its interpreter lie */
    pid_t tid;            /* its native_thread_id (3.11+); 0: not kept (3.9, 3.10) */
    unsigned long ident;  /* its thread_id: pthread_self() of the thread, threading's ident */
} cgi_pythread;

/* Every thread state of every interpreter, in their lists' order: at most
 * `max` into `out`, their number into *n (0 unless OK). A
 * cgi_pyread_result (CHANGED: a list changed while it was read). */
CGI_HIDDEN int cgi_pyread_threads(cgi_pythread *out, int max, int *n);

/* The frames of a thread cgi_pyread_threads listed, read and checked as
 * cgi_pyread_frames reads them: at most `max`, innermost first; *more is
 * 1 when a frame of Python code lies past them. NO_THREAD when that
 * thread state is no longer that thread's; CHANGED when the thread moved
 * while read (a thread running Python code). */
CGI_HIDDEN int cgi_pyread_stack(const cgi_pythread *t, cgi_pyframe *out, int max, int *n, int *more);

/* cgi_pyread_gil_held for a thread cgi_pyread_threads listed: 1, 0, -1. */
CGI_HIDDEN int cgi_pyread_gil_of(const cgi_pythread *t);

/* For pynames.c: a compact str object as UTF-8 (cgi_pyframe's file: its
 * tail after "..." where it does not fit), 0 or -1; is it the ASCII
 * string `want` (1, 0; -1 where it cannot be read)?; the minor version
 * read (0 until prepared). Reads through selfread.h, within a series of
 * reads its caller began. */
CGI_HIDDEN int cgi_pyread_str(uintptr_t obj, char *out, size_t cap);
CGI_HIDDEN int cgi_pyread_str_is(uintptr_t obj, const char *want);
CGI_HIDDEN int cgi_pyread_minor(void);

/* "ok", "no python", ...: for messages and tests. */
CGI_HIDDEN const char *cgi_pyread_result_name(int result);

#endif
