/* This process's own memory, read without a fault (selfread.h).
 *
 * process_vm_readv copies what is mapped and fails with EFAULT on what is
 * not. Where it cannot be used, pread on /proc/self/mem does the same
 * (the kernel's access_remote_vm: EIO on an unmapped address). Unlike
 * process_vm_readv it can also reach a mapping whose driver lets
 * debuggers read it (a device's memory, through the mapping's access
 * hook): only addresses a caller took from the interpreter's own objects
 * are read, each object checked before it is believed, so such a mapping
 * is met only through a pointer that went stale and whose memory was
 * unmapped and mapped again for a device in between.
 *
 * The descriptor: opened by a reader (the watchdog) the first time the
 * second way is needed, with O_CLOEXEC (an exec'd program never has it),
 * moved above fd 2 (a program that closed its standard descriptors and
 * opens files to fill them gets its own), and told apart from whatever a
 * program may later put on its number by its device and inode, checked
 * as each series of reads begins: a descriptor the program closed or
 * replaced is forgotten, never closed or read as memory. */
#define _GNU_SOURCE
#include "selfread.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static struct {
    _Atomic int way;   /* CGI_SELFREAD_VM until refused or a filter is seen; then MEM for good */
    _Atomic int fd;    /* /proc/self/mem; -1: not open */
    _Atomic pid_t pid; /* the process that opened it */
    _Atomic dev_t dev; /* and what it is */
    _Atomic ino_t ino;
    atomic_flag opening; /* one thread (re)opens it at a time */
} S = {.way = CGI_SELFREAD_VM, .fd = -1, .opening = ATOMIC_FLAG_INIT};

/* Does a seccomp filter govern the calling thread's system calls (or
 * strict mode)? Filters are per thread: its own status, else the main
 * thread's (kernels before 3.17 have no /proc/thread-self); 0 where
 * neither can be read. */
static int filtered(void)
{
    char buf[4096];
    int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t len = 0;
    for (ssize_t n; len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) > 0;)
        len += (size_t)n;
    close(fd);
    buf[len] = '\0';
    const char *p = strstr(buf, "\nSeccomp:");
    if (!p) return 0;
    for (p += 9; *p == ' ' || *p == '\t'; p++)
        ;
    return *p >= '1' && *p <= '9';
}

/* Is `fd` still the /proc/self/mem this process opened? */
static int ours(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == atomic_load(&S.dev) && st.st_ino == atomic_load(&S.ino);
}

/* Opens /proc/self/mem for process `pid`, `old` being what the slot held:
 * a copy from the parent (a clone that ran no fork handler) is closed,
 * anything else on its number is the program's and left alone. */
static int reopen(pid_t pid, int old)
{
    if (old >= 0 && atomic_load(&S.pid) != pid && ours(old)) close(old);
    int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fd <= 2) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        fd = high;
    }
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) != 0) close(fd), fd = -1;
    if (fd >= 0) atomic_store(&S.dev, st.st_dev), atomic_store(&S.ino, st.st_ino), atomic_store(&S.pid, pid);
    atomic_store_explicit(&S.fd, fd, memory_order_release);
    return fd;
}

/* The descriptor of this process's /proc/self/mem, opened if need be; -1. */
static int mem_fd(void)
{
    pid_t pid = getpid();
    int fd = atomic_load_explicit(&S.fd, memory_order_acquire);
    if (fd >= 0 && atomic_load(&S.pid) == pid && ours(fd)) return fd;
    for (int i = 0; atomic_flag_test_and_set_explicit(&S.opening, memory_order_acquire); i++) {
        if (i == 1000) return -1;
        sched_yield();
    }
    fd = atomic_load_explicit(&S.fd, memory_order_acquire);
    if (fd < 0 || atomic_load(&S.pid) != pid || !ours(fd)) fd = reopen(pid, fd);
    atomic_flag_clear_explicit(&S.opening, memory_order_release);
    return fd;
}

int cgi_selfread_begin(void)
{
    if (atomic_load(&S.way) == CGI_SELFREAD_VM && filtered()) atomic_store(&S.way, CGI_SELFREAD_MEM);
    if (atomic_load(&S.way) == CGI_SELFREAD_VM) return 0;
    return mem_fd() >= 0 ? 0 : -1;
}

int cgi_selfread(uintptr_t addr, void *buf, size_t len)
{
    /* pread's offset is signed: the upper half is no process's memory. */
    if (addr < 4096 || addr + len < addr || addr + len > (uintptr_t)INTPTR_MAX) return -1;
    if (atomic_load_explicit(&S.way, memory_order_relaxed) == CGI_SELFREAD_VM) {
        struct iovec here = {buf, len}, there = {(void *)addr, len};
        ssize_t n = process_vm_readv(getpid(), &here, 1, &there, 1, 0);
        if (n == (ssize_t)len) return 0;
        if (n >= 0 || (errno != EPERM && errno != EACCES && errno != ENOSYS)) return -1;
        atomic_store(&S.way, CGI_SELFREAD_MEM);
        if (mem_fd() < 0) return -1;
    }
    int fd = atomic_load_explicit(&S.fd, memory_order_relaxed);
    return fd >= 0 && pread(fd, buf, len, (off_t)addr) == (ssize_t)len ? 0 : -1;
}

int cgi_selfread_way(void) { return atomic_load(&S.way); }

void cgi_selfread_after_fork_child(void)
{
    int fd = atomic_load(&S.fd);
    if (fd >= 0 && ours(fd)) close(fd);
    atomic_store(&S.fd, -1);
    atomic_store(&S.pid, 0);
    atomic_flag_clear(&S.opening);
}
