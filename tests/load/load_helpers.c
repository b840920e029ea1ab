/* What the runners of the module loader's tests share (load_helpers.h). */
#define _GNU_SOURCE
#include "load_helpers.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

long long figure(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "%s=", key);
    for (const char *p = text; (p = strstr(p, pat)) != NULL; p++)
        if (p == text || p[-1] == ' ' || p[-1] == '\n') return atoll(p + strlen(pat));
    return -1;
}

int count_lines(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

int exited_ok(const cgtest_result *r) { return WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0; }

const char *worker(const char *var)
{
    const char *w = getenv(var);
    if (!w) {
        fprintf(stderr, "%s is not set (ctest sets it)\n", var);
        exit(2);
    }
    return w;
}

static char cache_env[512];

const char *fresh_cache(const char *name)
{
    snprintf(cache_env, sizeof cache_env, "CALLGUARD_CACHE_DIR=%s/%s", cgtest_tmpdir(), name);
    return cache_env;
}

int run_ze(cgtest_result *r, const char *const *env, const char *mode, const char *threads, const char *kernels)
{
    const char *argv[] = {worker("CG_LOAD_WORKER_ZE"), mode, threads, kernels, NULL};
    cgtest_run(r, env, argv);
    fprintf(stderr, "--- %s %s %s\n%s%s", mode, threads, kernels, r->out, r->err);
    return 0;
}

int entries(const char *dir, char names[][700], int max)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d)) != NULL;)
        if (de->d_name[0] != '.' && n < max) snprintf(names[n++], 700, "%s/%s", dir, de->d_name);
    if (d) closedir(d);
    return n;
}

int only_entry(const char *dir, char *path)
{
    char names[4][700];
    if (entries(dir, names, 4) != 1) return -1;
    snprintf(path, 700, "%s", names[0]);
    return 0;
}

int run_cl(cgtest_result *r, const char *const *env, const char *mode, const char *threads, const char *kernels)
{
    const char *argv[] = {worker("CG_LOAD_WORKER_CL"), mode, threads, kernels, NULL};
    cgtest_run(r, env, argv);
    fprintf(stderr, "--- %s %s %s\n%s%s", mode, threads, kernels, r->out, r->err);
    return 0;
}

/* ---- damaged cache entries ---- */

/* A byte of the payload's end flipped. */
static int flip_byte(const char *path)
{
    int fd = open(path, O_RDWR);
    if (fd < 0) return -1;
    off_t end = lseek(fd, 0, SEEK_END);
    char c;
    int ok = pread(fd, &c, 1, end - 2) == 1 && (c ^= 0x5a, pwrite(fd, &c, 1, end - 2) == 1);
    close(fd);
    return ok ? 0 : -1;
}

static int truncate_to_40(const char *path) { return truncate(path, 40); }

/* Lengths that wrap past 2^64 to the file's size: flags longer than the
 * file, payload 2^64 - 16. */
static int wrap_lengths(const char *path)
{
    int fd = open(path, O_RDWR);
    unsigned char h[24];
    if (fd < 0 || pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h) {
        if (fd >= 0) close(fd);
        return -1;
    }
    uint32_t fl = 0;
    uint64_t pl = 0;
    for (int i = 0; i < 4; i++)
        fl |= (uint32_t)h[12 + i] << (8 * i);
    for (int i = 0; i < 8; i++)
        pl |= (uint64_t)h[16 + i] << (8 * i);
    uint64_t shift = pl + 16; /* flags longer by this, payload shorter by it: the sum is unchanged */
    fl += (uint32_t)shift;
    pl -= shift;
    for (int i = 0; i < 4; i++)
        h[12 + i] = (unsigned char)(fl >> (8 * i));
    for (int i = 0; i < 8; i++)
        h[16 + i] = (unsigned char)(pl >> (8 * i));
    int ok = pwrite(fd, h, sizeof h, 0) == (ssize_t)sizeof h;
    close(fd);
    return ok ? 0 : -1;
}

/* A FIFO at the entry's name: a load that opened it would wait for a writer. */
static int fifo_in_place(const char *path) { return unlink(path) == 0 && mkfifo(path, 0600) == 0 ? 0 : -1; }

/* A 2 GiB garbage file (sparse) at the entry's name. */
static int huge_garbage(const char *path)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    int ok = fd >= 0 && write(fd, "garbage", 7) == 7 && ftruncate(fd, 2LL << 30) == 0;
    if (fd >= 0) close(fd);
    return ok ? 0 : -1;
}

const entry_damage entry_damages[] = {
    [DAMAGE_FLIPPED_BYTE] = {"is corrupt", flip_byte},
    [DAMAGE_TRUNCATED] = {"is corrupt", truncate_to_40},
    [DAMAGE_WRAPPING_LENGTHS] = {"is corrupt (truncated or padded: its lengths do not add up)", wrap_lengths},
    [DAMAGE_FIFO] = {"is corrupt (not a regular file)", fifo_in_place},
    [DAMAGE_HUGE_GARBAGE] = {"is corrupt (bad magic)", huge_garbage},
};

int two_damaged_entries_are_rebuilt(load_run run, const char *const *env, const char *mode, cgtest_result *second)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    cgtest_result r;
    run(&r, env, mode, "4", "4");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 4);
    char names[8][700];
    CHECK(entries(dir, names, 8) == 4);
    CHECK(entry_damages[DAMAGE_FLIPPED_BYTE].apply(names[0]) == 0);
    CHECK(entry_damages[DAMAGE_TRUNCATED].apply(names[1]) == 0);
    run(second, env, mode, "4", "4");
    CHECK(exited_ok(second));
    CHECK(figure(second->out, "loaded") == 4);
    CHECK(figure(second->out, "corrupt") == 2 && figure(second->out, "builds") == 2 &&
          figure(second->out, "disk_hits") == 2);
    CHECK(count_lines(second->err, "is corrupt") == 2);
    CHECK(figure(second->out, "disk_writes") == 2);
    run(&r, env, mode, "4", "4");
    CHECK(exited_ok(&r));
    CHECK(figure(r.out, "disk_hits") == 4 && figure(r.out, "corrupt") == 0 && figure(r.out, "builds") == 0);
    return 0;
}

int damaged_entry_is_rebuilt(const entry_damage *d, cgtest_result *first, cgtest_result *second, char *path)
{
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    char dir[400];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    run_ze(first, env, "distinct", "1", "1");
    CHECK(exited_ok(first) && figure(first->out, "disk_writes") == 1 && only_entry(dir, path) == 0);
    CHECK(d->apply(path) == 0);
    const char *argv[] = {"/usr/bin/timeout", "-s", "KILL", "60", worker("CG_LOAD_WORKER_ZE"),
                          "distinct",         "1",  "1",    NULL};
    cgtest_run(second, env, argv);
    fprintf(stderr, "--- distinct 1 1 (the entry damaged)\n%s%s", second->out, second->err);
    CHECKF(exited_ok(second), "wait status 0x%x (9: killed after 60 s, blocked on the entry)", second->status);
    CHECK(figure(second->out, "loaded") == 1 && figure(second->out, "corrupt") == 1 &&
          figure(second->out, "builds") == 1);
    CHECK(count_lines(second->err, d->said) == 1);
    return 0;
}
