/* The module cache's trust model (docs/security.md) and its damaged
 * entries, on Level Zero: the modes of what it makes, a symlinked or
 * writable-by-others folder, eviction of its own names only, and entries
 * that are corrupt, a FIFO or huge garbage. */
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
#include <time.h>
#include <unistd.h>

static int mode_is(const char *path, mode_t want)
{
    struct stat st;
    if (lstat(path, &st) != 0) return 0;
    if ((st.st_mode & 07777) != want) fprintf(stderr, "%s: mode %04o, expected %04o\n", path, st.st_mode & 07777, want);
    return (st.st_mode & 07777) == want;
}

/* The names in dir (dot files too), sorted, in one string. */
static void listing(const char *dir, char *out, size_t cap)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (strcmp(names[i]->d_name, ".") != 0 && strcmp(names[i]->d_name, "..") != 0)
            snprintf(out + strlen(out), cap - strlen(out), "%s ", names[i]->d_name);
        free(names[i]);
    }
    if (n >= 0) free(names);
}

static int touch(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* A cache callguard makes is its user's alone, whatever the umask (0, which
 * would leave everything open, and 0277, which would take the owner's own
 * bits): every folder it makes (a missing parent too) is 0700, entries 0600. */
static int ze_cache_folders_are_0700_and_entries_0600_whatever_the_umask(int argc, char **argv)
{
    (void)argc, (void)argv;
    static const mode_t masks[] = {0, 0277};
    for (int m = 0; m < 2; m++) {
        char parent[300], top[350], dir[400], var[450];
        snprintf(parent, sizeof parent, "%s/made%d", cgtest_tmpdir(), m);
        snprintf(top, sizeof top, "%s/c", parent);
        snprintf(dir, sizeof dir, "%s/load-v1", top);
        snprintf(var, sizeof var, "CALLGUARD_CACHE_DIR=%s", top);
        const char *env[] = {"CGSIM_COMPILE_MS=0", var, NULL};
        cgtest_result r;
        mode_t old = umask(masks[m]);
        run_ze(&r, env, "distinct", "1", "2");
        umask(old);
        CHECKF(exited_ok(&r) && figure(r.out, "disk_writes") == 2, "umask %04o", masks[m]);
        CHECKF(mode_is(parent, 0700) && mode_is(top, 0700) && mode_is(dir, 0700), "umask %04o", masks[m]);
        char names[8][700];
        CHECK(entries(dir, names, 8) == 2);
        CHECKF(mode_is(names[0], 0600) && mode_is(names[1], 0600), "umask %04o", masks[m]);
    }
    return 0;
}

/* load-v1 is a symlink to another folder (a dataset): the disk cache is off
 * with one line naming it, and with CALLGUARD_CACHE_SIZE=0 nothing in the
 * folder it names is created or deleted. */
static int ze_symlinked_load_v1_is_refused_and_nothing_outside_is_touched(int argc, char **argv)
{
    (void)argc, (void)argv;
    char data[400], top[400], link[450], path[500], var[450], before[1024], after[1024];
    snprintf(data, sizeof data, "%s/dataset", cgtest_tmpdir());
    snprintf(top, sizeof top, "%s/c", cgtest_tmpdir());
    snprintf(link, sizeof link, "%s/load-v1", top);
    CHECK(mkdir(data, 0700) == 0 && mkdir(top, 0700) == 0 && symlink(data, link) == 0);
    snprintf(path, sizeof path, "%s/results.bin", data);
    CHECK(touch(path, "precious") == 0);
    snprintf(path, sizeof path, "%s/%s", data, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
    CHECK(touch(path, "looks like an entry") == 0);
    listing(data, before, sizeof before);
    snprintf(var, sizeof var, "CALLGUARD_CACHE_DIR=%s", top);
    const char *env[] = {"CGSIM_COMPILE_MS=0", var, "CALLGUARD_CACHE_SIZE=0", NULL};
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "4");
    CHECK(exited_ok(&r) && figure(r.out, "loaded") == 4 && figure(r.out, "builds") == 4);
    CHECK(figure(r.out, "disk_writes") == 0 && figure(r.out, "evictions") == 0);
    listing(data, after, sizeof after);
    CHECKF(strcmp(before, after) == 0, "before: %s after: %s", before, after);
    CHECK(count_lines(r.err, "load-v1 is a symbolic link; the disk cache is off for this process") == 1);
    CHECK(strstr(r.out, "cache_dir=\n"));
    return 0;
}

/* Eviction removes only callguard's own names: with CALLGUARD_CACHE_SIZE=0
 * every entry but the newest goes, and an old temporary file of its own
 * pattern, but no other name in load-v1 (notes, 63 or 65 hex digits,
 * capitals, a .tmp- name of another pattern). */
static int ze_eviction_removes_only_callguards_own_names(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), "CALLGUARD_CACHE_SIZE=0", NULL};
    char dir[400], path[500];
    snprintf(dir, sizeof dir, "%s/c/load-v1", cgtest_tmpdir());
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "1");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 1);
    static const char *const foreign[] = {"notes.txt",
                                          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
                                          "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0",
                                          "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF",
                                          ".tmp-notes",
                                          ".tmp-12-x"};
    struct timespec hour_ago[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
    for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, foreign[i]);
        CHECK(touch(path, "not callguard's: a few bytes more than nothing") == 0);
        CHECK(utimensat(AT_FDCWD, path, hour_ago, 0) == 0);
    }
    snprintf(path, sizeof path, "%s/.tmp-12-34", dir); /* a crashed writer's */
    CHECK(touch(path, "half an entry") == 0 && utimensat(AT_FDCWD, path, hour_ago, 0) == 0);
    run_ze(&r, env, "distinct", "1", "4");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 3 && figure(r.out, "evictions") == 3); /* k0 hit */
    for (size_t i = 0; i < sizeof foreign / sizeof *foreign; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, foreign[i]);
        CHECKF(access(path, F_OK) == 0, "%s was removed", foreign[i]);
    }
    snprintf(path, sizeof path, "%s/.tmp-12-34", dir);
    CHECK(access(path, F_OK) != 0);
    char names[16][700];
    CHECK(entries(dir, names, 16) == 1 + 4); /* the newest entry, and the foreign names not starting with '.' */
    return 0;
}

/* A cache folder, load-v1 or an entry writable by others than its owner is
 * not used: one line names it and why, every kernel is built, nothing is
 * read from or written to the disk cache. */
static int ze_cache_writable_by_others_is_not_used(int argc, char **argv)
{
    (void)argc, (void)argv;
    const char *env[] = {"CGSIM_COMPILE_MS=0", fresh_cache("c"), NULL};
    char top[350], dir[400];
    snprintf(top, sizeof top, "%s/c", cgtest_tmpdir());
    snprintf(dir, sizeof dir, "%s/load-v1", top);
    cgtest_result r;
    run_ze(&r, env, "distinct", "1", "2");
    CHECK(exited_ok(&r) && figure(r.out, "disk_writes") == 2);
    char names[8][700];
    CHECK(entries(dir, names, 8) == 2);
    struct {
        const char *path;
        mode_t mode;
        const char *said;
    } cases[] = {{top, 0777, "c is writable by others (mode 0777); the disk cache is off for this process"},
                 {dir, 0770, "load-v1 is writable by its group (mode 0770); the disk cache is off"},
                 {names[1], 0666, "is writable by others (mode 0666); the disk cache is off"}};
    for (int i = 0; i < 3; i++) {
        CHECK(chmod(cases[i].path, cases[i].mode) == 0);
        run_ze(&r, env, "distinct", "1", "2");
        CHECK(exited_ok(&r) && figure(r.out, "loaded") == 2);
        CHECK(figure(r.out, "disk_writes") == 0 && figure(r.out, "builds") >= 1);
        if (i < 2) CHECK(figure(r.out, "disk_hits") == 0 && figure(r.out, "builds") == 2);
        CHECK(count_lines(r.err, cases[i].said) == 1 && count_lines(r.err, "callguard:") == 1);
        CHECK(chmod(cases[i].path, i < 2 ? 0700 : 0600) == 0);
    }
    run_ze(&r, env, "distinct", "1", "2");
    CHECK(exited_ok(&r) && figure(r.out, "disk_hits") == 2 && !strstr(r.err, "callguard:"));
    return 0;
}

/* An entry whose lengths wrap past 2^64 to the file's size (flags longer
 * than the file, payload 2^64 - 16) is corrupt: reported and rebuilt, no
 * crash. */
static int ze_entry_with_wrapping_lengths_is_corrupt_not_a_crash(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result first, second;
    char path[700];
    CHECK(damaged_entry_is_rebuilt(&entry_damages[DAMAGE_WRAPPING_LENGTHS], &first, &second, path) == 0);
    CHECK(figure(second.out, "disk_writes") == 1);
    return 0;
}

/* A FIFO at an entry's name: the load does not wait for a writer (the
 * worker is killed after 60 s if it does); the FIFO is reported as no
 * regular file and replaced by the rebuilt entry. */
static int ze_fifo_at_an_entry_name_does_not_block_the_load(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result first, second;
    char path[700];
    CHECK(damaged_entry_is_rebuilt(&entry_damages[DAMAGE_FIFO], &first, &second, path) == 0);
    struct stat st;
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode));
    return 0;
}

/* A 2 GiB garbage file (sparse) at an entry's name is refused after its
 * 56-byte header: the process reads no more than a run that found no entry
 * (/proc/self/io's rchar, give or take 1 MiB), the kernel loads, the file
 * is replaced. */
static int ze_huge_garbage_entry_is_refused_after_its_header(int argc, char **argv)
{
    (void)argc, (void)argv;
    cgtest_result first, second;
    char path[700] = "";
    int rc = damaged_entry_is_rebuilt(&entry_damages[DAMAGE_HUGE_GARBAGE], &first, &second, path);
    struct stat st;
    int replaced = stat(path, &st) == 0 && st.st_size < 4096;
    if (!replaced && *path) unlink(path);
    CHECK(rc == 0);
    long long cold = figure(first.out, "rchar"), read_ = figure(second.out, "rchar");
    CHECK(cold > 0);
    CHECKF(read_ < cold + (1 << 20), "read %lld bytes, a run without the entry %lld", read_, cold);
    CHECK(replaced);
    return 0;
}

const cgtest_case cgtest_cases[] = {
    {"ze_cache_folders_are_0700_and_entries_0600_whatever_the_umask",
     ze_cache_folders_are_0700_and_entries_0600_whatever_the_umask},
    {"ze_symlinked_load_v1_is_refused_and_nothing_outside_is_touched",
     ze_symlinked_load_v1_is_refused_and_nothing_outside_is_touched},
    {"ze_eviction_removes_only_callguards_own_names", ze_eviction_removes_only_callguards_own_names},
    {"ze_cache_writable_by_others_is_not_used", ze_cache_writable_by_others_is_not_used},
    {"ze_entry_with_wrapping_lengths_is_corrupt_not_a_crash", ze_entry_with_wrapping_lengths_is_corrupt_not_a_crash},
    {"ze_fifo_at_an_entry_name_does_not_block_the_load", ze_fifo_at_an_entry_name_does_not_block_the_load},
    {"ze_huge_garbage_entry_is_refused_after_its_header", ze_huge_garbage_entry_is_refused_after_its_header},
};
const size_t cgtest_ncases = sizeof cgtest_cases / sizeof *cgtest_cases;
