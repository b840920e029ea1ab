/* This process's own memory, read without a fault (selfread.c): for a
 * reader (pyread.c) that follows pointers another thread may free or
 * change while it reads. A bad address is a failed read, never a signal;
 * nothing is allocated and no lock the program can hold is taken.
 *
 * Two ways, the first that this process allows:
 *   1. process_vm_readv on its own pid (one system call a read);
 *   2. pread on /proc/self/mem, opened once on first need (O_CLOEXEC, never
 *      on fds 0-2) and kept; reopened in a forked child, whose own memory
 *      it is not. A bad address gives EIO. Needs no CAP_SYS_PTRACE (a
 *      process that made itself non-dumpable cannot open its own unless
 *      it is root).
 * The second is taken for good where a seccomp filter governs the reading
 * thread (the "Seccomp:" line of /proc/thread-self/status, looked at as
 * each series of reads begins: a filter that kills the process on
 * process_vm_readv cannot be probed, a program may install one at any
 * time, and filters are never taken off), or where process_vm_readv was
 * refused (EPERM, EACCES, ENOSYS: a filter that answers with an error, a
 * kernel without it). Where neither way is open a read fails: "unknown"
 * to the caller. A filter installed by another thread between that look
 * and the reads of the one answer that follow it is not seen. */
#ifndef CGI_SELFREAD_H
#define CGI_SELFREAD_H

#include "../common/common.h"

#include <stddef.h>
#include <stdint.h>

enum { CGI_SELFREAD_VM = 0, CGI_SELFREAD_MEM = 1 };

/* Begins a series of reads on the calling thread: picks the way, opening
 * /proc/self/mem where it is the way and is not open in this process.
 * 0, or -1 where no way is open now. */
CGI_HIDDEN int cgi_selfread_begin(void);

/* Copies `len` bytes at `addr` into `buf`: 0, or -1 where any of them
 * could not be read (not mapped, no way open). */
CGI_HIDDEN int cgi_selfread(uintptr_t addr, void *buf, size_t len);

/* The way reads go now: CGI_SELFREAD_VM or CGI_SELFREAD_MEM. */
CGI_HIDDEN int cgi_selfread_way(void);

/* In a forked child (the atfork child handler): closes the parent's
 * /proc/self/mem, which reads the parent's memory; the child's own is
 * opened when first needed. The way stays: filters are inherited. */
CGI_HIDDEN void cgi_selfread_after_fork_child(void);

#endif
