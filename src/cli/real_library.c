/* Which real library a guarded program gets: `callguard run` links
 * libcallguard-real-<api>.so to it in the run's shim directory, where the
 * shim standing in for the soname finds it. Chosen in this order:
 *   1. CALLGUARD_<API>_LIBRARY (the layer's library variable), if set;
 *   2. the path found when the layer was built, if that file exists;
 *   3. the soname where the dynamic loader would find it: LD_LIBRARY_PATH,
 *      then the ld.so cache, then the system directories; a file of
 *      callguard's own (a shim, from an outer `callguard run` or an
 *      install) and a file of another machine or word size are skipped, as
 *      the loader skips the latter. For NCCL only LD_LIBRARY_PATH: its
 *      programs carry their own copy (PyTorch's, found through its run
 *      path), and a shim linked to the ld.so cache's (a CUDA toolkit's)
 *      would hand them another version than they get plainly. Without one
 *      there is no shim, and the preloaded layer reaches the program's own. */
#define _GNU_SOURCE
#include "cli.h"

#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct cli_elf {
    unsigned char *p;
    size_t size;
} cli_elf;

static int cli_elf_map(const char *path, cli_elf *e)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    e->p = NULL;
    if (fd < 0) return 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size >= sizeof(Elf64_Ehdr)) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) e->p = m, e->size = (size_t)st.st_size;
    }
    close(fd);
    return e->p && memcmp(e->p, ELFMAG, SELFMAG) == 0;
}

static void cli_elf_unmap(cli_elf *e)
{
    if (e->p) munmap(e->p, e->size);
}

/* Class and machine of this process, which the program shares. */
static int cli_same_machine(const cli_elf *e)
{
    static unsigned char cls;
    static uint16_t machine;
    if (!cls) {
        cli_elf self;
        if (!cli_elf_map("/proc/self/exe", &self)) return 1; /* cannot tell: do not skip */
        cls = self.p[EI_CLASS];
        machine = ((const Elf64_Ehdr *)self.p)->e_machine; /* same offset in both classes */
        cli_elf_unmap(&self);
    }
    return e->p[EI_CLASS] == cls && ((const Elf64_Ehdr *)e->p)->e_machine == machine;
}

/* The first string of a 64-bit ELF object's dynamic entries with this tag
 * (DT_NEEDED, DT_SONAME) that starts with `prefix`; NULL if none. */
static const char *cli_dynamic_string(const cli_elf *e, long tag, const char *prefix)
{
    if (e->p[EI_CLASS] != ELFCLASS64) return NULL;
    const Elf64_Ehdr *h = (const Elf64_Ehdr *)e->p;
    if (h->e_shoff == 0 || h->e_shentsize != sizeof(Elf64_Shdr) ||
        h->e_shoff + (uint64_t)h->e_shnum * sizeof(Elf64_Shdr) > e->size)
        return NULL;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(e->p + h->e_shoff);
    for (unsigned i = 0; i < h->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= h->e_shnum) continue;
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > e->size || str->sh_offset + str->sh_size > e->size) return NULL;
        const Elf64_Dyn *d = (const Elf64_Dyn *)(e->p + sh[i].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof *d && d[k].d_tag != DT_NULL; k++) {
            if (d[k].d_tag != tag || d[k].d_un.d_val >= str->sh_size) continue;
            const char *name = (const char *)e->p + str->sh_offset + d[k].d_un.d_val;
            if (memchr(name, '\0', str->sh_size - d[k].d_un.d_val) && strncmp(name, prefix, strlen(prefix)) == 0)
                return name;
        }
    }
    return NULL;
}

/* Does a 64-bit ELF object name libcallguard among its DT_NEEDED? */
static int cli_needs_callguard(const cli_elf *e) { return cli_dynamic_string(e, DT_NEEDED, "libcallguard.so") != NULL; }

char *cli_soname_of(const char *path)
{
    cli_elf e;
    const char *name = cli_elf_map(path, &e) ? cli_dynamic_string(&e, DT_SONAME, "") : NULL;
    char *copy = name ? strdup(name) : NULL;
    cli_elf_unmap(&e);
    return copy;
}

/* A file the loader could load for the program, and not callguard's. */
static int cli_usable(const char *path)
{
    cli_elf e;
    int ok = cli_elf_map(path, &e) && cli_same_machine(&e) && !cli_needs_callguard(&e);
    cli_elf_unmap(&e);
    return ok;
}

static char *cli_in_dir(const char *dir, size_t len, const char *soname)
{
    char *path;
    if (asprintf(&path, "%.*s/%s", (int)len, dir, soname) < 0) exit(1);
    if (cli_usable(path)) return path;
    free(path);
    return NULL;
}

/* The ld.so cache (glibc's format "glibc-ld.so.cache1.1", alone or after
 * the old "ld.so-1.7.0" table): every path it holds for the soname. */
static char *cli_from_cache(const char *soname)
{
    cli_elf c; /* not an ELF file: only the mapping is used */
    int fd = open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0) return NULL;
    c.p = NULL;
    if (fstat(fd, &st) == 0 && st.st_size > 48) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) c.p = m, c.size = (size_t)st.st_size;
    }
    close(fd);
    if (!c.p) return NULL;
    const char *magic = "glibc-ld.so.cache1.1";
    size_t base = 0;
    if (memcmp(c.p, "ld.so-1.7.0", 11) == 0) {
        uint32_t nold;
        memcpy(&nold, c.p + 12, 4);
        base = (12 + 4 + (size_t)nold * 12 + 7) & ~(size_t)7;
    }
    char *found = NULL;
    if (base + 48 <= c.size && memcmp(c.p + base, magic, 20) == 0) {
        uint32_t nlibs;
        memcpy(&nlibs, c.p + base + 20, 4);
        for (uint32_t i = 0; i < nlibs && !found; i++) {
            size_t ent = base + 48 + (size_t)i * 24;
            if (ent + 24 > c.size) break;
            uint32_t key, value;
            memcpy(&key, c.p + ent + 4, 4);
            memcpy(&value, c.p + ent + 8, 4);
            if (base + key >= c.size || base + value >= c.size) continue;
            const char *k = (const char *)c.p + base + key, *v = (const char *)c.p + base + value;
            if (!memchr(k, 0, c.size - base - key) || !memchr(v, 0, c.size - base - value)) continue;
            if (strcmp(k, soname) == 0 && cli_usable(v)) found = strdup(v);
        }
    }
    munmap(c.p, c.size);
    return found;
}

static char *cli_find_soname(const char *soname, int path_only)
{
    const char *llp = getenv("LD_LIBRARY_PATH");
    for (const char *p = llp; p && *p;) {
        size_t n = strcspn(p, ":;");
        char *found = n ? cli_in_dir(p, n, soname) : NULL;
        if (found) return found;
        p += n;
        if (*p) p++;
    }
    if (path_only) return NULL;
    char *found = cli_from_cache(soname);
    if (found) return found;
    static const char *const system_dirs[] = {"/lib/x86_64-linux-gnu",
                                              "/usr/lib/x86_64-linux-gnu",
                                              "/lib/aarch64-linux-gnu",
                                              "/usr/lib/aarch64-linux-gnu",
                                              "/lib64",
                                              "/usr/lib64",
                                              "/lib",
                                              "/usr/lib"};
    for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs && !found; i++)
        found = cli_in_dir(system_dirs[i], strlen(system_dirs[i]), soname);
    return found;
}

char *cli_real_library(const cli_layer *l)
{
    const char *given = l->info.library_env ? getenv(l->info.library_env) : NULL;
    if (given && *given) return strdup(given);
    if (l->info.library_path && l->info.library_path[0] == '/' && access(l->info.library_path, R_OK) == 0)
        return strdup(l->info.library_path);
    if (!l->info.soname) return NULL;
    /* Several sonames (libamdhip64.so.5,.so.6,.so.7): the newest found, the last of the list first. */
    char *list = strdup(l->info.soname), *found = NULL;
    if (!list) exit(1);
    for (char *comma; !found; *comma = '\0') {
        comma = strrchr(list, ',');
        found = cli_find_soname(comma ? comma + 1 : list, cg_layer_search(l->info.api) == CG_SEARCH_LD_LIBRARY_PATH);
        if (!comma) break;
    }
    free(list);
    return found;
}
