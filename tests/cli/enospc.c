/* Preloaded before libcallguard: every file system is full. posix_fallocate
 * and ftruncate fail with ENOSPC, as on a full disk, without root or a
 * small mount. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

int posix_fallocate(int fd, off_t offset, off_t len)
{
    (void)fd, (void)offset, (void)len;
    return ENOSPC;
}

int posix_fallocate64(int fd, off_t offset, off_t len) { return posix_fallocate(fd, offset, len); }

int ftruncate(int fd, off_t length)
{
    (void)fd, (void)length;
    errno = ENOSPC;
    return -1;
}

int ftruncate64(int fd, off_t length) { return ftruncate(fd, length); }
