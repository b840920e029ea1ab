/* The disk cache: one file per key under DIR/load-v1/, named by the key's
 * SHA-256, holding the native binary a build made and the flags it used.
 *
 * Layout: "CGLOADv1", u32 key length, u32 flags length, u64 payload length
 * (little-endian), 32 bytes of SHA-256 over key, flags and payload, then the
 * three. A file whose size, magic, key or checksum does not match is corrupt:
 * reported once per process, removed, rebuilt and written again.
 *
 * Several processes share the directory: an entry is written to a temporary
 * file of the writer's own (pid and counter) and renamed into place, so a
 * reader sees a whole old entry or a whole new one; a reader that opened a
 * file keeps reading it even if another process replaces or evicts it. A hit
 * sets the file's mtime: eviction (under a non-blocking flock of DIR/.lock,
 * so one process at a time scans) removes the least recently used entries
 * until the total is below the limit. Any failure to write (full disk, no
 * permission, a file where the directory should be) is counted, reported
 * once, and the load goes on without the disk cache. */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "CGLOADv1"
#define HEADER 56u
#define DEFAULT_MAX (1ull << 30)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char dir[PATH_MAX + 16]; /* DIR/load-v1, "" when off */
static char top[PATH_MAX];     /* DIR */
static char config_error[512]; /* a bad CALLGUARD_CACHE* value */
static unsigned long long max_bytes = DEFAULT_MAX;
static int cache_off; /* CALLGUARD_CACHE=off: neither cache */
static atomic_int write_reported;
static atomic_uint tmp_counter;

static pthread_mutex_t reported_lock = PTHREAD_MUTEX_INITIALIZER;
static char **reported;
static size_t nreported;

static int parse_size(const char *v, unsigned long long *out)
{
    if (!*v) return -1;
    char *end;
    errno = 0;
    if (*v < '0' || *v > '9') return -1;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno) return -1;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10, end++;
    else if (*end == 'M' || *end == 'm') shift = 20, end++;
    else if (*end == 'G' || *end == 'g') shift = 30, end++;
    if (*end || n > (ULLONG_MAX >> shift)) return -1;
    *out = n << shift;
    return 0;
}

static void configure(void)
{
    const char *mode = getenv("CALLGUARD_CACHE");
    if (mode && strcmp(mode, "on") != 0 && strcmp(mode, "off") != 0 && strcmp(mode, "memory") != 0) {
        snprintf(config_error, sizeof config_error, "CALLGUARD_CACHE=%s: expected on, memory or off", mode);
        return;
    }
    const char *size = getenv("CALLGUARD_CACHE_SIZE");
    if (size && parse_size(size, &max_bytes) != 0) {
        snprintf(config_error, sizeof config_error,
                 "CALLGUARD_CACHE_SIZE=%s: expected a size in bytes, digits with an optional K, M or G suffix "
                 "(default 1G)",
                 size);
        return;
    }
    if (mode && strcmp(mode, "off") == 0) cache_off = 1;
    if (mode && strcmp(mode, "on") != 0) return; /* the disk cache is off */
    const char *d = getenv("CALLGUARD_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (d && *d) {
        if (d[0] != '/') {
            snprintf(config_error, sizeof config_error, "CALLGUARD_CACHE_DIR=%s: expected an absolute path", d);
            return;
        }
        n = snprintf(top, sizeof top, "%s", d);
    } else if (xdg && xdg[0] == '/')
        n = snprintf(top, sizeof top, "%s/callguard", xdg);
    else if (home && home[0] == '/')
        n = snprintf(top, sizeof top, "%s/.cache/callguard", home);
    else
        return; /* nowhere to put it: memory only */
    if (n < 0 || (size_t)n >= sizeof top - 64) {
        top[0] = '\0';
        return;
    }
    snprintf(dir, sizeof dir, "%s/load-v1", top);
}

int lb_disk_config(cg_load_result *res)
{
    pthread_once(&once, configure);
    if (config_error[0]) return lb_fail(res, CG_EINVAL, NULL, 0, "%s", config_error);
    return CG_OK;
}

int lb_cache_off(void)
{
    pthread_once(&once, configure);
    return cache_off;
}

int lb_disk_enabled(void)
{
    pthread_once(&once, configure);
    return dir[0] != '\0';
}

LB_EXPORT const char *cg_load_cache_dir(void)
{
    pthread_once(&once, configure);
    return top[0] && dir[0] ? top : "";
}

static void entry_path(const char *key, size_t keylen, char *path, size_t size)
{
    char hex[65];
    lb_sha256_hex(key, keylen, hex);
    snprintf(path, size, "%s/%s", dir, hex);
}

/* One line per entry per process. */
static void report_once(const char *path, const char *fmt, const char *why)
{
    pthread_mutex_lock(&reported_lock);
    for (size_t i = 0; i < nreported; i++)
        if (strcmp(reported[i], path) == 0) {
            pthread_mutex_unlock(&reported_lock);
            return;
        }
    char **grown = realloc(reported, (nreported + 1) * sizeof *reported);
    if (grown) {
        reported = grown;
        reported[nreported] = strdup(path);
        if (reported[nreported]) nreported++;
    }
    pthread_mutex_unlock(&reported_lock);
    fprintf(stderr, fmt, path, why);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

static void checksum(const void *key, size_t kl, const void *flags, size_t fl, const void *pl, size_t pn, uint8_t out[32])
{
    lb_sha256 s;
    lb_sha256_init(&s);
    lb_sha256_update(&s, key, kl);
    lb_sha256_update(&s, flags, fl);
    lb_sha256_update(&s, pl, pn);
    lb_sha256_final(&s, out);
}

static void corrupt(const char *path, const char *why)
{
    lb_stat_add(&lb_stats.corrupt);
    report_once(path, "callguard: module cache entry %s is corrupt (%s): rebuilding it\n", why);
    unlink(path);
}

int lb_disk_get(const char *key, size_t keylen, void **payload, size_t *n, char **flags)
{
    if (!lb_disk_enabled()) return 0;
    char path[PATH_MAX + 80];
    entry_path(key, keylen, path, sizeof path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct stat st;
    uint8_t *buf = NULL;
    const char *why = NULL;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)HEADER) {
        why = "shorter than its header";
    } else if (!(buf = malloc((size_t)st.st_size))) {
        close(fd);
        return 0;
    } else {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
        uint64_t kl = get32(buf + 8), fl = get32(buf + 12), pl = get64(buf + 16);
        uint8_t sum[32];
        if (got != (size_t)st.st_size) why = "cannot be read whole";
        else if (memcmp(buf, MAGIC, 8) != 0) why = "bad magic";
        else if (HEADER + kl + fl + pl != (uint64_t)st.st_size) why = "truncated or padded: its lengths do not add up";
        else if (kl != keylen || memcmp(buf + HEADER, key, keylen) != 0) why = "it holds another key";
        else {
            checksum(buf + HEADER, kl, buf + HEADER + kl, fl, buf + HEADER + kl + fl, pl, sum);
            if (memcmp(sum, buf + 24, 32) != 0) why = "checksum mismatch";
        }
        if (!why) {
            char *f = malloc(fl + 1);
            void *p = malloc(pl ? pl : 1);
            if (!f || !p) {
                free(f);
                free(p);
                free(buf);
                close(fd);
                return 0;
            }
            memcpy(f, buf + HEADER + kl, fl);
            f[fl] = '\0';
            memcpy(p, buf + HEADER + kl + fl, pl);
            *flags = f;
            *payload = p;
            *n = pl;
            futimens(fd, NULL); /* most recently used, for eviction */
        }
    }
    free(buf);
    close(fd);
    if (why) {
        corrupt(path, why);
        return -1;
    }
    return 1;
}

void lb_disk_reject(const char *key, size_t keylen, const char *why)
{
    char path[PATH_MAX + 80];
    entry_path(key, keylen, path, sizeof path);
    corrupt(path, why);
}

static void write_failed(const char *what, int err)
{
    lb_stat_add(&lb_stats.write_failures);
    if (atomic_exchange(&write_reported, 1)) return;
    fprintf(stderr, "callguard: module cache: cannot write %s (%s); loads go on without storing modules\n", what,
            strerror(err));
}

static int mkdirs(const char *path)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
            *s = '/';
        }
    if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
    struct stat st;
    if (stat(p, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

struct file {
    char name[80];
    long long size;
    struct timespec mtime;
};

static int older(const void *a, const void *b)
{
    const struct file *x = a, *y = b;
    if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
    if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Removes least recently used entries until the total fits, and temporary
 * files a crashed writer left (older than ten minutes). */
static void evict(const char *keep)
{
    char lockpath[PATH_MAX + 16];
    snprintf(lockpath, sizeof lockpath, "%s/.lock", dir);
    int lfd = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lfd < 0) return;
    if (flock(lfd, LOCK_EX | LOCK_NB) != 0) { /* another process is at it */
        close(lfd);
        return;
    }
    DIR *d = opendir(dir);
    struct file *files = NULL;
    size_t nfiles = 0, cap = 0;
    unsigned long long total = 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        if (de->d_name[0] == '.' && strncmp(de->d_name, ".tmp-", 5) != 0) continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        if (strncmp(de->d_name, ".tmp-", 5) == 0) {
            if (now.tv_sec - st.st_mtim.tv_sec > 600) unlinkat(dirfd(d), de->d_name, 0);
            continue;
        }
        if (strlen(de->d_name) >= sizeof files->name) continue;
        if (nfiles == cap) {
            cap = cap ? 2 * cap : 64;
            struct file *g = realloc(files, cap * sizeof *files);
            if (!g) break;
            files = g;
        }
        snprintf(files[nfiles].name, sizeof files[nfiles].name, "%s", de->d_name);
        files[nfiles].size = (long long)st.st_size;
        files[nfiles].mtime = st.st_mtim;
        total += (unsigned long long)st.st_size;
        nfiles++;
    }
    if (total > max_bytes && files) {
        qsort(files, nfiles, sizeof *files, older);
        for (size_t i = 0; i < nfiles && total > max_bytes; i++) {
            if (strcmp(files[i].name, keep) == 0) continue; /* the entry just written stays */
            if (unlinkat(dirfd(d), files[i].name, 0) == 0) lb_stat_add(&lb_stats.evictions);
            total -= (unsigned long long)files[i].size;
        }
    }
    free(files);
    if (d) closedir(d);
    close(lfd); /* releases the flock */
}

void lb_disk_put(const char *key, size_t keylen, const void *payload, size_t n, const char *flags)
{
    if (!lb_disk_enabled()) return;
    if (mkdirs(dir) != 0) {
        write_failed(dir, errno);
        return;
    }
    size_t fl = strlen(flags);
    uint8_t header[HEADER];
    memcpy(header, MAGIC, 8);
    put32(header + 8, (uint32_t)keylen);
    put32(header + 12, (uint32_t)fl);
    put64(header + 16, n);
    checksum(key, keylen, flags, fl, payload, n, header + 24);
    char path[PATH_MAX + 80], tmp[PATH_MAX + 80];
    entry_path(key, keylen, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s/.tmp-%ld-%u", dir, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        write_failed(tmp, errno);
        return;
    }
    const void *parts[4] = {header, key, flags, payload};
    size_t sizes[4] = {HEADER, keylen, fl, n};
    int err = 0;
    for (int i = 0; i < 4 && !err; i++)
        for (size_t done = 0; done < sizes[i];) {
            ssize_t w = write(fd, (const char *)parts[i] + done, sizes[i] - done);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                err = w < 0 ? errno : ENOSPC;
                break;
            }
            done += (size_t)w;
        }
    if (close(fd) != 0 && !err) err = errno;
    if (!err && rename(tmp, path) != 0) err = errno;
    if (err) {
        unlink(tmp);
        write_failed(path, err);
        return;
    }
    lb_stat_add(&lb_stats.disk_writes);
    const char *base = strrchr(path, '/');
    evict(base ? base + 1 : path);
}
