/* callguard run: the run's directory and the child's environment. The
 * child gets the layers preloaded, a directory of soname shims first on
 * LD_LIBRARY_PATH, the statistics directory, and the options as
 * CALLGUARD_* variables; an ASan-built program, ASan's leave to come after
 * them. */
#define _GNU_SOURCE
#include "run.h"
#include "../common/message.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef MFD_CLOEXEC /* glibc older than 2.27 */
#include <linux/memfd.h>
#endif

extern char **environ;

static void env_set(env_list *e, const char *name, const char *value)
{
    size_t len = strlen(name);
    char *entry;
    if (asprintf(&entry, "%s=%s", name, value) < 0) exit(1);
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=') {
            free(e->v[i]);
            e->v[i] = entry;
            return;
        }
    if (e->n + 2 > e->cap) {
        e->cap = e->cap ? 2 * e->cap : 64;
        e->v = realloc(e->v, e->cap * sizeof *e->v);
        if (!e->v) exit(1);
    }
    e->v[e->n++] = entry;
    e->v[e->n] = NULL;
}

static void env_unset(env_list *e, const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < e->n; i++)
        if (strncmp(e->v[i], name, len) == 0 && e->v[i][len] == '=') {
            free(e->v[i]);
            e->v[i] = e->v[--e->n];
            e->v[e->n] = NULL;
            return;
        }
}

/* Prepends `first` to a colon-separated variable, keeping what was there. */
static void env_prepend(env_list *e, const char *name, const char *first, const char *sep)
{
    const char *old = getenv(name);
    char *v;
    if (asprintf(&v, "%s%s%s", first, old && *old ? sep : "", old && *old ? old : "") < 0) exit(1);
    env_set(e, name, v);
    free(v);
}

void run_env_free(env_list *e)
{
    for (size_t i = 0; i < e->n; i++)
        free(e->v[i]);
    free(e->v);
}

/* A directory for this run: the processes' statistics files, and shims/. */
char *run_make_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *dir;
    if (asprintf(&dir, "%s/callguard-XXXXXX", tmp && *tmp ? tmp : "/tmp") < 0) exit(1);
    if (!mkdtemp(dir)) {
        free(dir);
        dir = strdup("/tmp/callguard-XXXXXX");
        if (!dir) exit(1);
        if (!mkdtemp(dir)) {
            cgi_say("cannot create a directory for statistics: %s", strerror(errno));
            free(dir);
            return NULL;
        }
    }
    return dir;
}

/* The shims of the chosen layers: links made for this run, first on the
 * child's library path. Beside each SONAME -> shim, the link
 * libcallguard-real-API.so -> the real library (real_library.c), which the
 * shim needs. A layer whose real library was not found gets no shim link:
 * the shim would find only the placeholder on its run path (every call
 * failing as with no driver) and would hide whatever the program finds
 * itself (its own RUNPATH, a path it dlopens), so the program sees what it
 * would see without callguard, and the preloaded layer still guards the
 * library it finds. A layer with several sonames (libamdhip64.so.5, .so.6,
 * .so.7) gets the shim of the real library's own soname (its DT_SONAME), so
 * the program finds under callguard the sonames it finds without; the first
 * soname's shim when the real library has none of them. */
static void run_link_shims(env_list *env, const cli_layers *set, const char *dir)
{
    char *shims;
    if (asprintf(&shims, "%s/shims", dir) < 0) exit(1);
    int nshims = 0;
    if (mkdir(shims, 0700) == 0)
        for (size_t i = 0; i < set->n; i++) {
            const cli_layer *l = &set->v[i];
            if (!l->shim) continue;
            char *real = cli_real_library(l);
            if (!real) continue;
            char *own = strchr(l->info.soname, ',') ? cli_soname_of(real) : NULL;
            char *shim = own ? cli_shim_for(l, own) : NULL;
            const char *soname = own;
            if (!shim) {
                shim = strdup(l->shim);
                if (!shim) exit(1);
                soname = strrchr(shim, '/') + 1;
            }
            char *to, *alias;
            if (asprintf(&to, "%s/%s", shims, soname) < 0) exit(1);
            if (asprintf(&alias, "%s/libcallguard-real-%s.so", shims, l->info.api) < 0) exit(1);
            if (symlink(real, alias) != 0)
                cgi_say("cannot link %s to %s: %s", alias, real, strerror(errno));
            else if (symlink(shim, to) == 0)
                nshims++;
            free(to), free(alias), free(real), free(own), free(shim);
        }
    if (nshims) env_prepend(env, "LD_LIBRARY_PATH", shims, ":");
    free(shims);
}

void run_lost_open(run_lost *l, const char *dir)
{
    static const char zeros[4096];
    *l = (run_lost){NULL, -1, -1, 0, ""};
    /* pwrite, not ftruncate, gives the memfd its size: a preloaded
     * library that fakes a full disk (tests/cli/enospc.c) fails ftruncate. */
    l->memfd = (int)syscall(SYS_memfd_create, "callguard-lost", MFD_CLOEXEC); /* memfd_create() is glibc 2.27's */
    if (l->memfd >= 0 && pwrite(l->memfd, zeros, sizeof zeros, 0) == (ssize_t)sizeof zeros)
        l->page = mmap(NULL, sizeof *l->page, PROT_READ | PROT_WRITE, MAP_SHARED, l->memfd, 0);
    if (l->page == MAP_FAILED) l->page = NULL;
    if (!l->page) return;
    memcpy(l->page->magic, CGI_LOST_MAGIC, sizeof CGI_LOST_MAGIC);
    snprintf(l->path, sizeof l->path, "/proc/%d/fd/%d", (int)getpid(), l->memfd);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    l->file = dfd < 0 ? -1 : openat(dfd, CGI_STATS_LOST_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (dfd >= 0) close(dfd);
    l->written = l->file >= 0 && pwrite(l->file, zeros, sizeof zeros, 0) == (ssize_t)sizeof zeros;
    if (l->file >= 0 && !l->written && ftruncate(l->file, 0) != 0) {
        close(l->file);
        l->file = -1;
    }
}

/* The count into the directory's file (made again when the directory or
 * the file was removed during the run); said on stderr when it cannot be. */
void run_lost_close(run_lost *l, const char *dir)
{
    if (!l->page) return;
    cgi_lost_page page = {.count = atomic_load(&l->page->count)};
    memcpy(page.magic, CGI_LOST_MAGIC, sizeof CGI_LOST_MAGIC);
    struct stat st;
    int e = 0;
    if (page.count && (l->file < 0 || fstat(l->file, &st) != 0 || st.st_nlink == 0)) {
        if (l->file >= 0) close(l->file);
        char *path;
        if (asprintf(&path, "%s/%s", dir, CGI_STATS_LOST_FILE) < 0) exit(1);
        mkdir(dir, 0700);
        l->file = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        e = errno;
        l->written = 0;
        free(path);
    }
    int ok = !page.count || (l->file >= 0 && pwrite(l->file, &page, sizeof page, 0) == (ssize_t)sizeof page);
    if (!ok && l->file >= 0 && !l->written) {
        /* No byte can be written: the count is the size of the empty file. */
        e = errno;
        ok = ftruncate(l->file, 0) == 0 && ftruncate(l->file, (off_t)page.count) == 0;
    }
    if (!ok)
        cgi_say("%" PRIu64
                " process%s could not keep statistics and %s missing from the report; the count could not be "
                "written to %s: %s",
                page.count, page.count == 1 ? "" : "es", page.count == 1 ? "is" : "are", dir,
                strerror(l->file < 0 ? e : errno));
    if (l->file >= 0) close(l->file);
    munmap(l->page, sizeof *l->page);
    close(l->memfd);
}

/* ---- an ASan-built program -----------------------------------------------------
 * A program built with AddressSanitizer and linked to its runtime
 * (gcc's -fsanitize=address: libasan.so) checks at start that the runtime
 * comes first among its libraries, and exits when a preloaded library
 * comes before it ("ASan runtime does not come first in initial library
 * list"): libcallguard does. Such a program gets verify_asan_link_order=0
 * added to ASAN_OPTIONS, unless ASAN_OPTIONS names that option itself.
 * Preloading libasan first instead would load ASan's runtime into every
 * other process of the run (a shell, a compiler), with LeakSanitizer's
 * reports of their leaks and its exit status. */

/* The file execvp runs for `name` (the same PATH), or NULL; malloc'd. */
static char *run_find_program(const char *name)
{
    if (strchr(name, '/')) return strdup(name);
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/bin:/usr/bin";;) {
        const char *colon = strchr(p, ':');
        int len = colon ? (int)(colon - p) : (int)strlen(p);
        char *file;
        struct stat st;
        if (asprintf(&file, "%.*s%s%s", len, p, len ? "/" : "", name) < 0) exit(1);
        if (access(file, X_OK) == 0 && stat(file, &st) == 0 && S_ISREG(st.st_mode)) return file;
        free(file);
        if (!colon) return NULL;
        p = colon + 1;
    }
}

/* Where the file holds the virtual address `addr` (its PT_LOAD segments), or -1. */
static off_t run_file_offset(const ElfW(Phdr) * ph, size_t n, ElfW(Addr) addr)
{
    for (size_t i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && addr >= ph[i].p_vaddr && addr - ph[i].p_vaddr < ph[i].p_filesz)
            return (off_t)(ph[i].p_offset + (addr - ph[i].p_vaddr));
    return -1;
}

/* Does the dynamic section (of the file's program headers ph) need ASan's
 * runtime: a DT_NEEDED libasan.so.N (gcc) or libclang_rt.asan (clang's
 * -shared-libasan)? */
static int run_needs_asan(int fd, const ElfW(Phdr) * ph, size_t n)
{
    const ElfW(Phdr) *dynamic = NULL;
    for (size_t i = 0; i < n; i++)
        if (ph[i].p_type == PT_DYNAMIC) dynamic = &ph[i];
    if (!dynamic || !dynamic->p_filesz || dynamic->p_filesz > 65536) return 0;
    ElfW(Dyn) *dyn = malloc(dynamic->p_filesz);
    size_t count = dynamic->p_filesz / sizeof *dyn;
    int found = 0;
    if (dyn && pread(fd, dyn, dynamic->p_filesz, (off_t)dynamic->p_offset) == (ssize_t)dynamic->p_filesz) {
        off_t strtab = -1;
        for (size_t i = 0; i < count && dyn[i].d_tag != DT_NULL; i++)
            if (dyn[i].d_tag == DT_STRTAB) strtab = run_file_offset(ph, n, dyn[i].d_un.d_ptr);
        for (size_t i = 0; strtab >= 0 && i < count && dyn[i].d_tag != DT_NULL && !found; i++) {
            char name[32] = {0};
            if (dyn[i].d_tag != DT_NEEDED || pread(fd, name, sizeof name - 1, strtab + (off_t)dyn[i].d_un.d_val) <= 0)
                continue;
            found = strncmp(name, "libasan.so", 10) == 0 || strncmp(name, "libclang_rt.asan", 16) == 0;
        }
    }
    free(dyn);
    return found;
}

/* Is `file` an ELF program of this machine's class that links ASan's runtime? */
static int run_links_asan(const char *file)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ElfW(Ehdr) eh;
    ElfW(Phdr) ph[64];
    int found = pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
                eh.e_ident[EI_CLASS] == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) &&
                eh.e_phentsize == sizeof *ph && eh.e_phnum && eh.e_phnum <= 64 &&
                pread(fd, ph, eh.e_phnum * sizeof *ph, (off_t)eh.e_phoff) == (ssize_t)(eh.e_phnum * sizeof *ph) &&
                run_needs_asan(fd, ph, eh.e_phnum);
    close(fd);
    return found;
}

/* verify_asan_link_order=0 for a program that links ASan's runtime. */
static void run_asan_link_order(env_list *env, const char *prog)
{
    const char *old = getenv("ASAN_OPTIONS");
    if (old && strstr(old, "verify_asan_link_order")) return;
    char *file = run_find_program(prog);
    int asan = file && run_links_asan(file);
    free(file);
    if (!asan) return;
    char *v;
    if (asprintf(&v, "%s%sverify_asan_link_order=0", old ? old : "", old && *old ? ":" : "") < 0) exit(1);
    env_set(env, "ASAN_OPTIONS", v);
    free(v);
}

/* The child's environment: ours, with the layers preloaded and the options
 * as CALLGUARD_* variables; no CALLGUARD_REPORT (we write the one report). */
void run_child_environment(env_list *env, const run_opts *o, const cli_layers *set, const char *dir,
                           const run_lost *lost)
{
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "CALLGUARD_REPORT=", 17) == 0) continue;
        char *eq = strchr(*e, '=');
        if (!eq) continue;
        char *name = strndup(*e, (size_t)(eq - *e));
        env_set(env, name, eq + 1);
        free(name);
    }
    char *preload = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&preload, &len);
    if (!f) exit(1);
    /* libcallguard itself first, before libc in the lookup order: its
     * dlsym() answers global look-ups as they are without callguard
     * (dlsym_interpose.c), and with the fatal-signal hook its sigaction()
     * and signal() chain a handler the program sets later to callguard's.
     * By the name the layers need (a wheel's tree has copies, not links:
     * libcallguard.so would be a second file with the same soname). */
    const char *signals = o->set[CGI_SETTING_SIGNALS] ? o->set[CGI_SETTING_SIGNALS] : getenv("CALLGUARD_SIGNALS");
    if (set->n || (signals && strcmp(signals, "record") == 0))
        fprintf(f, "%s/libcallguard.so.0%s", cli_libdir, set->n ? ":" : "");
    for (size_t i = 0; i < set->n; i++)
        fprintf(f, "%s%s", i ? ":" : "", set->v[i].file);
    fclose(f);
    if (*preload) {
        env_prepend(env, "LD_PRELOAD", preload, ":");
        if (o->prog && o->prog[0]) run_asan_link_order(env, o->prog[0]);
    }
    free(preload);
    run_link_shims(env, set, dir);
    env_set(env, "CALLGUARD_STATS_DIR", dir);
    if (lost->page)
        env_set(env, "CALLGUARD_STATS_LOST", lost->path);
    else
        env_unset(env, "CALLGUARD_STATS_LOST");
    /* Each option's setting, as its variable (cli_run_options). --serialize
     * adds to CALLGUARD_SERIALIZE; --trace's processes record into the
     * statistics directory (they see CALLGUARD_STATS_DIR), and we write the
     * merged FILE afterwards; --release-runtime: each process releases the
     * runtime it has (CPython, Julia). */
    for (int id = 0; id < CGI_NSETTINGS; id++) {
        const char *v = o->set[id], *var = cgi_setting_vars[id];
        if (!v) continue;
        const char *old = id == CGI_SETTING_SERIALIZE ? getenv(var) : NULL;
        char *joined = NULL;
        if (old && *old && asprintf(&joined, "%s,%s", old, v) < 0) exit(1);
        env_set(env, var, joined ? joined : v);
        free(joined);
    }
    env_unset(env, "CALLGUARD_REPORT");
}
