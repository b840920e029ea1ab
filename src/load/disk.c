/* The disk cache: one file per key under DIR/load-v1/, named by the key's
 * SHA-256, holding the native binary a build made and the flags it used.
 *
 * Layout: "CGLOADv1", u32 key length, u32 flags length, u64 payload length
 * (little-endian), 32 bytes of SHA-256 over key, flags and payload, then the
 * three. The header is read first and each length checked against the
 * file's size on its own (a sum could wrap); only then is the rest read. A
 * file whose size, magic, key or checksum does not match, or that is no
 * regular file, is corrupt: reported once per process, removed, rebuilt and
 * written again.
 *
 * Trust: an entry is native code the process will run, and eviction deletes
 * files, so the cache is its user's alone (docs/security.md). DIR, load-v1
 * and every entry must be owned by the effective user and writable by no one
 * else; anything else turns the disk cache off for the process, said once.
 * load-v1 is opened once without following a symlink, and every name in it
 * is reached through that descriptor (openat, O_NOFOLLOW, O_NONBLOCK), so a
 * symlink or a FIFO planted there is never followed nor waited on. Folders
 * made here are 0700, entries 0600. A process started with raised privilege
 * (AT_SECURE) takes neither the cache variables nor the home-derived
 * default: its caller chose them. It keeps the memory cache only.
 *
 * Several processes of the user share the directory: an entry is written to
 * a temporary file of the writer's own (pid and counter) and renamed into
 * place, so a reader sees a whole old entry or a whole new one; a reader that
 * opened a file keeps reading it even if another process replaces or evicts
 * it. A hit sets the file's mtime: eviction (under a non-blocking flock of
 * load-v1/.lock, so one process at a time scans) removes the least recently
 * used entries until the total is below the limit, and touches no name that
 * is not an entry's or a temporary file's. Any failure to write (full disk,
 * no permission, a file where the directory should be) is counted, reported
 * once, and the load goes on without the disk cache. */
#define _GNU_SOURCE
#include "internal.h"
#include "../common/message.h"
#include "../common/secure_notice.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAGIC "CGLOADv1"
#define HEADER 56u
#define DEFAULT_MAX (1ull << 30)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char dir[PATH_MAX + 16]; /* DIR/load-v1, "" when off */
static char top[PATH_MAX];      /* DIR */
static char config_error[512];  /* a bad CALLGUARD_CACHE* value */
static unsigned long long max_bytes = DEFAULT_MAX;
static int cache_off; /* CALLGUARD_CACHE=off: neither cache */
static atomic_int write_reported;
static atomic_uint tmp_counter;

/* load-v1, opened and checked once (-1 until then); distrusted: a folder or
 * an entry failed the checks, the disk cache is off for the process. */
static pthread_mutex_t dir_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int dir_fd = -1;
static atomic_int distrusted;

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
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end || n > (ULLONG_MAX >> shift)) return -1;
    *out = n << shift;
    return 0;
}

/* Raised privilege: the caller's environment chose every cache variable and
 * HOME, so a setuid program would create, load and evict files of its
 * caller's choosing as its owner. Memory only; the names of the variables
 * set are said in libcallguard's one line, or here where it is not loaded. */
static void ignore_cache_variables(void)
{
    static const char *const vars[] = {"CALLGUARD_CACHE", "CALLGUARD_CACHE_DIR", "CALLGUARD_CACHE_SIZE"};
    char ignored[128] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
        if (getenv(vars[i]))
            used += (size_t)snprintf(ignored + used, sizeof ignored - used, "%s%s", used ? ", " : "", vars[i]);
    if (used && !dlsym(RTLD_DEFAULT, "cg_configure")) {
        (void)dlerror(); /* the failed lookup's message is not the program's */
        cgi_say(CGI_SECURE_NOTICE, ignored);
    }
}

static void configure(void)
{
    if (getauxval(AT_SECURE)) {
        ignore_cache_variables();
        return;
    }
    const char *mode = secure_getenv("CALLGUARD_CACHE");
    if (mode && strcmp(mode, "on") != 0 && strcmp(mode, "off") != 0 && strcmp(mode, "memory") != 0) {
        snprintf(config_error, sizeof config_error, "CALLGUARD_CACHE=%s: expected on, memory or off", mode);
        return;
    }
    const char *size = secure_getenv("CALLGUARD_CACHE_SIZE");
    if (size && parse_size(size, &max_bytes) != 0) {
        snprintf(config_error, sizeof config_error,
                 "CALLGUARD_CACHE_SIZE=%s: expected a size in bytes, digits with an optional K, M or G suffix "
                 "(default 1G)",
                 size);
        return;
    }
    if (mode && strcmp(mode, "off") == 0) cache_off = 1;
    if (mode && strcmp(mode, "on") != 0) return; /* the disk cache is off */
    const char *d = secure_getenv("CALLGUARD_CACHE_DIR"), *xdg = secure_getenv("XDG_CACHE_HOME"),
               *home = secure_getenv("HOME");
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
    return dir[0] != '\0' && !atomic_load(&distrusted);
}

LB_EXPORT const char *cg_load_cache_dir(void) { return lb_disk_enabled() && top[0] ? top : ""; }

/* The disk cache is off for the rest of the process: one line says why. */
static void distrust(const char *path, const char *why)
{
    if (atomic_exchange(&distrusted, 1)) return;
    cgi_say("module cache: %s %s; the disk cache is off for this process (the cache must be the user's own and "
            "writable by no one else: sharing one is not supported)",
            path, why);
}

/* Whether st may be trusted: the effective user's, writable by no one else. */
static int trusted(const struct stat *st, const char *path)
{
    char why[96];
    if (st->st_uid != geteuid())
        snprintf(why, sizeof why, "is owned by uid %u, not by this process's user (uid %u)", (unsigned)st->st_uid,
                 (unsigned)geteuid());
    else if (st->st_mode & (S_IWGRP | S_IWOTH))
        snprintf(why, sizeof why, "is writable by %s (mode %04o)", st->st_mode & S_IWOTH ? "others" : "its group",
                 (unsigned)(st->st_mode & 07777));
    else
        return 1;
    distrust(path, why);
    return 0;
}

/* Opens the folder name (relative to at) without following a symlink and
 * checks it; made 0700 first when create. mode700: set its mode to 0700
 * (a folder of callguard's own). The descriptor, or -1 with errno. */
static int open_folder(int at, const char *name, const char *path, int create, int mode700)
{
    int made = create && mkdirat(at, name, 0700) == 0;
    if (create && !made && errno != EEXIST) return -1;
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        int err = errno;
        if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
            distrust(path, "is a symbolic link");
        errno = err;
        return -1;
    }
    if (fstat(fd, &st) != 0 || !trusted(&st, path)) {
        close(fd);
        errno = EACCES;
        return -1;
    }
    /* mkdirat's mode passed through the umask: exactly 0700, whatever it is */
    if ((made || mode700) && (st.st_mode & 07777) != 0700) fchmod(fd, 0700);
    return fd;
}

/* DIR's parents, made 0700 where missing (whatever the umask); DIR itself
 * and load-v1 are open_folder's. */
static int make_parents(const char *path)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", path);
    char *last = strrchr(p, '/');
    for (char *s = p + 1; last && s <= last; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(p, 0700) == 0) {
                int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0) fchmod(fd, 0700), close(fd);
            } else if (errno != EEXIST) {
                return -1;
            }
            *s = '/';
        }
    return 0;
}

/* load-v1's descriptor, opened at the first get that finds the folder or the
 * first put (which makes it); -1 with errno when there is none (yet). */
static int cache_fd(int create)
{
    int fd = atomic_load(&dir_fd);
    if (fd >= 0) return fd;
    pthread_mutex_lock(&dir_lock);
    fd = atomic_load(&dir_fd);
    int err = 0;
    if (fd < 0 && !atomic_load(&distrusted)) {
        int tfd = -1;
        if (create && make_parents(top) != 0)
            err = errno;
        else if ((tfd = open_folder(AT_FDCWD, top, top, create, 0)) < 0)
            err = errno;
        else if ((fd = open_folder(tfd, "load-v1", dir, create, 1)) < 0)
            err = errno;
        if (tfd >= 0) close(tfd);
        if (fd >= 0) atomic_store(&dir_fd, fd);
    }
    pthread_mutex_unlock(&dir_lock);
    errno = err;
    return atomic_load(&distrusted) ? -1 : fd;
}

/* One line per entry per process. */
static void report_once(const char *path, const char *why)
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
    cgi_say("module cache entry %s is corrupt (%s): rebuilding it", path, why);
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
static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32; }

static void checksum(const void *key, size_t kl, const void *flags, size_t fl, const void *pl, size_t pn,
                     uint8_t out[32])
{
    lb_sha256 s;
    lb_sha256_init(&s);
    lb_sha256_update(&s, key, kl);
    lb_sha256_update(&s, flags, fl);
    lb_sha256_update(&s, pl, pn);
    lb_sha256_final(&s, out);
}

/* name: an entry's or a temporary file's in load-v1, as shown in messages. */
static void shown(char *path, size_t size, const char *name) { snprintf(path, size, "%s/%s", dir, name); }

static void corrupt(int dfd, const char *name, const char *why)
{
    char path[PATH_MAX + 80];
    shown(path, sizeof path, name);
    lb_stat_add(&lb_stats.corrupt);
    report_once(path, why);
    unlinkat(dfd, name, 0); /* a symlink or a FIFO itself, never what it names */
}

static int read_at(int fd, void *buf, size_t n, off_t at)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, at + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Checks the entry open at fd against the key, then reads what its header
 * declares. NULL (a hit: the out-values set), else why it is corrupt; "" when
 * it was not used for another reason (no memory, not trusted: said). */
static const char *read_entry(int fd, const char *name, const char *key, size_t keylen, void **payload, size_t *n,
                              char **flags)
{
    struct stat st;
    uint8_t h[HEADER];
    char path[PATH_MAX + 80];
    shown(path, sizeof path, name);
    if (fstat(fd, &st) != 0) return "cannot be read whole";
    if (st.st_uid == geteuid() && !S_ISREG(st.st_mode)) return "not a regular file";
    if (!trusted(&st, path)) return "";
    if (st.st_size < (off_t)HEADER || read_at(fd, h, HEADER, 0) != 0) return "shorter than its header";
    if (memcmp(h, MAGIC, 8) != 0) return "bad magic";
    /* each length against what is left, so no sum can wrap */
    uint64_t rest = (uint64_t)st.st_size - HEADER, kl = get32(h + 8), fl = get32(h + 12), pl = get64(h + 16);
    if (kl > rest || fl > rest - kl || pl != rest - kl - fl) return "truncated or padded: its lengths do not add up";
    if (kl != keylen) return "it holds another key";
    if (rest >= SIZE_MAX) return "";
    uint8_t *buf = malloc(rest ? (size_t)rest : 1), sum[32];
    char *f = malloc(fl + 1);
    void *p = malloc(pl ? pl : 1);
    const char *why = "";
    if (buf && f && p) {
        if (read_at(fd, buf, (size_t)rest, HEADER) != 0)
            why = "cannot be read whole";
        else if (memcmp(buf, key, keylen) != 0)
            why = "it holds another key";
        else {
            checksum(buf, kl, buf + kl, fl, buf + kl + fl, pl, sum);
            why = memcmp(sum, h + 24, 32) != 0 ? "checksum mismatch" : NULL;
        }
    }
    if (!why) {
        memcpy(f, buf + kl, fl);
        f[fl] = '\0';
        memcpy(p, buf + kl + fl, pl);
        *flags = f;
        *payload = p;
        *n = pl;
    } else {
        free(f);
        free(p);
    }
    free(buf);
    return why;
}

int lb_disk_get(const char *key, size_t keylen, void **payload, size_t *n, char **flags)
{
    if (!lb_disk_enabled()) return 0;
    int dfd = cache_fd(0);
    if (dfd < 0) return 0;
    char name[65];
    lb_sha256_hex(key, keylen, name);
    /* O_NONBLOCK: a FIFO at the name opens at once (and is refused) */
    int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) {
        struct stat st;
        if (errno != ENOENT && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
            corrupt(dfd, name, "not a regular file");
            return -1;
        }
        return 0;
    }
    const char *why = read_entry(fd, name, key, keylen, payload, n, flags);
    if (!why) futimens(fd, NULL); /* most recently used, for eviction */
    close(fd);
    if (why && *why) {
        corrupt(dfd, name, why);
        return -1;
    }
    return why ? 0 : 1;
}

void lb_disk_reject(const char *key, size_t keylen, const char *why)
{
    int dfd = cache_fd(0);
    if (dfd < 0) return;
    char name[65];
    lb_sha256_hex(key, keylen, name);
    corrupt(dfd, name, why);
}

static void write_failed(const char *what, int err)
{
    lb_stat_add(&lb_stats.write_failures);
    if (atomic_exchange(&write_reported, 1)) return;
    cgi_say("module cache: cannot write %s (%s); loads go on without storing modules", what, strerror(err));
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

/* An entry's name: the key's SHA-256 in 64 lowercase hex digits. */
static int entry_name(const char *s)
{
    size_t i = 0;
    for (; s[i]; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f'))) return 0;
    return i == 64;
}

/* A temporary file's name, as lb_disk_put makes it: .tmp-PID-N. */
static int temp_name(const char *s)
{
    if (strncmp(s, ".tmp-", 5) != 0) return 0;
    s += 5;
    for (int part = 0; part < 2; part++) {
        if (*s < '0' || *s > '9') return 0;
        while (*s >= '0' && *s <= '9')
            s++;
        if (part == 0 && *s++ != '-') return 0;
    }
    return *s == '\0';
}

/* Removes least recently used entries until the total fits, and temporary
 * files a crashed writer left (older than ten minutes). Only those names,
 * only regular files, all relative to load-v1's descriptor. */
static void evict(int dfd, const char *keep)
{
    int lfd = openat(dfd, ".lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (lfd < 0) return;
    if (flock(lfd, LOCK_EX | LOCK_NB) != 0) { /* another process is at it */
        close(lfd);
        return;
    }
    int sfd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); /* its own position for readdir */
    DIR *d = sfd >= 0 ? fdopendir(sfd) : NULL;
    if (!d && sfd >= 0) close(sfd);
    struct file *files = NULL;
    size_t nfiles = 0, cap = 0;
    unsigned long long total = 0;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    for (struct dirent *de; d && (de = readdir(d)) != NULL;) {
        int temp = temp_name(de->d_name);
        if (!temp && !entry_name(de->d_name)) continue;
        struct stat st;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        if (temp) {
            if (now.tv_sec - st.st_mtim.tv_sec > 600) unlinkat(dfd, de->d_name, 0);
            continue;
        }
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
            if (unlinkat(dfd, files[i].name, 0) == 0) lb_stat_add(&lb_stats.evictions);
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
    int dfd = cache_fd(1);
    if (dfd < 0) {
        if (lb_disk_enabled()) write_failed(dir, errno);
        return;
    }
    size_t fl = strlen(flags);
    uint8_t header[HEADER];
    memcpy(header, MAGIC, 8);
    put32(header + 8, (uint32_t)keylen);
    put32(header + 12, (uint32_t)fl);
    put64(header + 16, n);
    checksum(key, keylen, flags, fl, payload, n, header + 24);
    char name[65], tmp[64], path[PATH_MAX + 80];
    lb_sha256_hex(key, keylen, name);
    snprintf(tmp, sizeof tmp, ".tmp-%ld-%u", (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        shown(path, sizeof path, tmp);
        write_failed(path, errno);
        return;
    }
    fchmod(fd, 0600); /* the umask may have taken the owner's bits */
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
    if (!err && renameat(dfd, tmp, dfd, name) != 0) err = errno;
    if (err) {
        unlinkat(dfd, tmp, 0);
        shown(path, sizeof path, name);
        write_failed(path, err);
        return;
    }
    lb_stat_add(&lb_stats.disk_writes);
    evict(dfd, name);
}
