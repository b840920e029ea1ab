/* The program's dlsym(), defined by libcallguard so that, where it comes
 * before libc in the lookup order (`callguard run` preloads it first), a
 * look-up in the global scope answers as it would without callguard.
 *
 * Why: a preloaded layer exports the API's names, so dlsym(RTLD_DEFAULT,
 * "MPI_Get_version") or dlsym(dlopen(NULL), ...) finds the layer's wrapper
 * in a process that has not loaded the library at all. mpi4py 4 probes
 * exactly that at import: it finds MPI_Get_version, then misses Open MPI's
 * data symbol ompi_mpi_comm_self, decides the library is MPICH and fails
 * to load (ImportError: libmpi.so.12). Plainly the first look-up fails and
 * mpi4py opens libmpi itself. So a global look-up that lands on a layer's
 * name while no library callguard does not own defines that name answers
 * NULL, with dlerror() set, as plainly; once the library is loaded it
 * answers the layer's wrapper, so the calls stay guarded.
 *
 * Every other look-up goes where it would go without callguard: to the
 * next definition of dlsym in the lookup order (the program's own
 * interposer, preloaded as hook libraries and capture layers are, else
 * libc's), reached by a tail jump: dlsym() tells RTLD_NEXT (and
 * RTLD_DEFAULT's scope) by its caller's return address, which the jump
 * keeps. callguard's own look-ups (a layer finding its real library) go to
 * libc's: the program's interposer sees what it would see without
 * callguard. Hence the few lines of assembly; x86-64 only, elsewhere no
 * dlsym is defined here (docs/design.md, "What a program sees"). A file of
 * its own, like signals_interpose.c: the fuzz harnesses link the runtime's
 * objects statically and must not get a dlsym. */
#define _GNU_SOURCE
#include "elfsym.h"
#include "resolve.h"
#include "site.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>

#if defined(__x86_64__) && defined(__ELF__)

/* Everything the trampoline reaches is CGI_UNINSTRUMENTED (internal.h):
 * sanitizer runtimes call dlsym while they start. */
typedef void *(*cgi_dlsym_fn)(void *, const char *);
/* libc's dlsym, and the next one after libcallguard's (libc's, or the
 * program's own interposer): found once. */
static cgi_dlsym_fn _Atomic cgi_libc_dlsym, cgi_next_dlsym;

/* libcallguard's own dynamic section: tells its entry in the link map. */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((visibility("hidden")));

/* Is this libc (or libdl, which held dlsym before glibc 2.34)? */
CGI_UNINSTRUMENTED static int cgi_is_libc(const char *path)
{
    if (!path) return 0;
    const char *base = path;
    for (const char *c = path; *c; c++)
        if (*c == '/') base = c + 1;
    return cgi_str_starts(base, "libc.so.") || cgi_str_starts(base, "libdl.so.");
}

/* This object's definition of dlsym that a program's reference to
 * dlsym@GLIBC_2.34 (or @GLIBC_2.2.5, a program built before 2.34) binds
 * to, as the dynamic linker matches versions: a global or weak function of
 * that version, or unversioned and not hidden. *glibc: of that version. */
CGI_UNINSTRUMENTED static void *cgi_dlsym_in(const cgi_dyn *d, uint32_t hash, int *glibc)
{
    for (uint32_t at = 0, i; (i = cgi_dyn_next(d, "dlsym", hash, &at));) {
        const ElfW(Sym) *sym = &d->symtab[i];
        int bind = ELF64_ST_BIND(sym->st_info), hidden;
        if (ELF64_ST_TYPE(sym->st_info) != STT_FUNC || (bind != STB_GLOBAL && bind != STB_WEAK)) continue;
        const char *v = cgi_dyn_version(d, i, &hidden);
        *glibc = v && (cgi_str_eq(v, "GLIBC_2.34") || cgi_str_eq(v, "GLIBC_2.2.5"));
        if (*glibc || (!v && !hidden)) return (void *)(d->base + sym->st_value);
    }
    return NULL;
}

/* The objects after libcallguard's in the link map, up to libc: the first
 * definition of dlsym, and libc's. The map is read from memory, with no
 * call into the loader (a sanitizer's dl_iterate_phdr may not work yet
 * while it starts). The objects up to libc were loaded at start-up, before
 * anything else, and are never unloaded. */
CGI_UNINSTRUMENTED static void cgi_dlsym_walk(cgi_dlsym_fn *next, cgi_dlsym_fn *libc)
{
    uint32_t hash = cgi_gnu_hash("dlsym");
    int after = 0;
    for (struct link_map *m = _r_debug.r_map; m && !*libc; m = m->l_next) {
        if (!after) {
            after = m->l_ld == _DYNAMIC;
            continue;
        }
        cgi_dyn d;
        int glibc = 0;
        void *p = cgi_dyn_read(m->l_addr, m->l_ld, &d) ? cgi_dlsym_in(&d, hash, &glibc) : NULL;
        if (p && !*next) *(void **)next = p;
        if (p && glibc && cgi_is_libc(m->l_name)) *(void **)libc = p;
    }
}

/* libc's dlsym, and in *next the one the program's look-ups go to. Where
 * the walk finds no libc after libcallguard: by version (glibc before 2.34
 * keeps it in libdl as GLIBC_2.2.5), and then no later dlsym is reached. */
CGI_UNINSTRUMENTED static cgi_dlsym_fn cgi_dlsym_targets(cgi_dlsym_fn *next)
{
    cgi_dlsym_fn libc = atomic_load_explicit(&cgi_libc_dlsym, memory_order_acquire);
    if (libc) {
        *next = atomic_load_explicit(&cgi_next_dlsym, memory_order_relaxed);
        return libc;
    }
    *next = NULL;
    cgi_dlsym_walk(next, &libc);
    if (!libc) *next = NULL;
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
    for (unsigned i = 0; !libc && i < sizeof versions / sizeof *versions; i++) {
        void *h = dlopen(i ? "libdl.so.2" : "libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        if (h) *(void **)&libc = dlvsym(h, "dlsym", versions[i]);
    }
    if (!*next) *next = libc;
    atomic_store_explicit(&cgi_next_dlsym, *next, memory_order_relaxed);
    atomic_store_explicit(&cgi_libc_dlsym, libc, memory_order_release);
    return libc;
}

/* The registered layers' prefixes, one entry each, for a test of a few
 * instructions an entry: every global look-up asks. Entries are only
 * appended (layers register, never leave): readers take the count, then
 * read the entries below it. A prefix too long, or too many of them, and
 * every look-up walks the layers' lists instead. */
#define CGI_PREFIXES_MAX 64
typedef struct cgi_prefix {
    char text[16];
    size_t len;
    const cg_layer *layer;
} cgi_prefix;

static cgi_prefix cgi_prefixes[CGI_PREFIXES_MAX];
static _Atomic unsigned cgi_nprefixes;
static _Atomic uint64_t cgi_prefix_firsts[4]; /* their first characters, a bit each */
static _Atomic int cgi_prefixes_overflow;
static cg_layer *_Atomic cgi_prefixes_of; /* the layers' list when last appended */
static pthread_mutex_t cgi_prefixes_lock = PTHREAD_MUTEX_INITIALIZER;

/* Appends the prefixes of the layers registered since the last time (the
 * list grows at its head). */
static void cgi_prefixes_update(void)
{
    pthread_mutex_lock(&cgi_prefixes_lock);
    cg_layer *head = __atomic_load_n(&cgi_layers, __ATOMIC_ACQUIRE), *upto = atomic_load(&cgi_prefixes_of);
    unsigned n = atomic_load(&cgi_nprefixes);
    for (cg_layer *l = head; l && l != upto; l = l->next)
        for (const char *p = l->prefixes; p && *p;) {
            size_t len = strcspn(p, ",");
            unsigned char c = (unsigned char)*p;
            if (len) atomic_fetch_or(&cgi_prefix_firsts[c >> 6], (uint64_t)1 << (c & 63));
            if (len && (len >= sizeof cgi_prefixes[0].text || n == CGI_PREFIXES_MAX))
                atomic_store(&cgi_prefixes_overflow, 1);
            else if (len) {
                memcpy(cgi_prefixes[n].text, p, len);
                cgi_prefixes[n].len = len;
                cgi_prefixes[n++].layer = l;
            }
            p += len + (p[len] == ',');
        }
    atomic_store_explicit(&cgi_nprefixes, n, memory_order_release);
    atomic_store_explicit(&cgi_prefixes_of, head, memory_order_release);
    pthread_mutex_unlock(&cgi_prefixes_lock);
}

/* Does `name` start with a prefix in the comma-separated list? */
static int cgi_has_prefix(const char *name, const char *prefixes)
{
    for (const char *p = prefixes; p && *p;) {
        size_t len = strcspn(p, ",");
        if (len && strncmp(name, p, len) == 0) return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* 1 when a global look-up of `name` would find a layer's export although no
 * library of the program's defines the name (with_main: nor the program
 * itself): plainly it finds nothing. In
 * order of cost: a layer's prefix (close has the OpenCL layer's), exported
 * by that layer's object (read from its symbol table: no loader call),
 * defined by no object that is not callguard's. */
static int cgi_dlsym_hides(const char *name, cg_layer *head, int with_main)
{
    if (atomic_load_explicit(&cgi_prefixes_of, memory_order_acquire) != head) cgi_prefixes_update();
    unsigned char c = (unsigned char)*name;
    if (!((atomic_load_explicit(&cgi_prefix_firsts[c >> 6], memory_order_relaxed) >> (c & 63)) & 1)) return 0;
    uint32_t hash = 0;
    const cg_layer *exported = NULL;
    if (atomic_load(&cgi_prefixes_overflow)) {
        for (cg_layer *l = head; l && !exported; l = l->next)
            if (cgi_has_prefix(name, l->prefixes) &&
                cgi_callguard_defines(l, name, hash ? hash : (hash = cgi_gnu_hash(name))))
                exported = l;
    } else {
        unsigned n = atomic_load_explicit(&cgi_nprefixes, memory_order_acquire);
        for (unsigned i = 0; i < n && !exported; i++) {
            const cgi_prefix *e = &cgi_prefixes[i];
            if (e->text[0] != name[0] || strncmp(name, e->text, e->len) != 0) continue;
            if (cgi_callguard_defines(e->layer, name, hash ? hash : (hash = cgi_gnu_hash(name)))) exported = e->layer;
        }
    }
    if (!exported) return 0;
    int saved = errno;
    int outside = cgi_defined_outside_callguard(name, hash, with_main);
    errno = saved;
    return !outside;
}

/* Is addr in the main program (its loaded segments, from the auxiliary
 * vector)? */
CGI_UNINSTRUMENTED static int cgi_in_main_program(const void *addr)
{
    const ElfW(Phdr) *ph = (const void *)getauxval(AT_PHDR);
    unsigned long n = getauxval(AT_PHNUM);
    struct link_map *m = _r_debug.r_map;
    if (!ph || !m) return 0;
    for (unsigned long i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && (uintptr_t)addr - (m->l_addr + ph[i].p_vaddr) < ph[i].p_memsz) return 1;
    return 0;
}

/* Called by the trampoline below with dlsym's arguments and its caller's
 * return address: the function to jump to (the caller's frame untouched),
 * or NULL to answer as a failed look-up (cgi_dlsym_hidden). */
CGI_UNINSTRUMENTED __attribute__((used)) CGI_HIDDEN cgi_dlsym_fn cgi_dlsym_route(void *handle, const char *name,
                                                                                 const void *caller)
{
    cgi_dlsym_fn next, libc = cgi_dlsym_targets(&next);
    if (next != libc && cgi_is_callguard_object(caller)) next = libc;
    cg_layer *layers = __atomic_load_n(&cgi_layers, __ATOMIC_ACQUIRE);
    if (!libc || !name || !layers) return next;
    /* RTLD_NEXT from the main program searches the global scope after it:
     * the layers first, as a global look-up does, less the program. */
    int global = handle == RTLD_DEFAULT || handle == (void *)_r_debug.r_map;
    int next_from_main = !global && handle == RTLD_NEXT && cgi_in_main_program(caller);
    if (!global && !next_from_main) return next;
    return cgi_dlsym_hides(name, layers, !next_from_main) ? NULL : next;
}

/* A failed look-up's answer: NULL, and dlerror() saying the name is
 * undefined (glibc's own message, from a look-up in libc's handle). The
 * program's own dlsym, if it has one, is called as it would be, its
 * answer not taken. */
__attribute__((used)) CGI_HIDDEN void *cgi_dlsym_hidden(void *handle, const char *name, const void *caller)
{
    int saved = errno;
    cgi_dlsym_fn next, libc = cgi_dlsym_targets(&next);
    if (next && next != libc && !cgi_is_callguard_object(caller)) (void)next(handle, name);
    static void *_Atomic libc_handle;
    void *h = atomic_load_explicit(&libc_handle, memory_order_acquire);
    if (!h) atomic_store_explicit(&libc_handle, h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD), memory_order_release);
    if (h && libc) (void)libc(h, name);
    errno = saved;
    return NULL;
}

/* dlsym(handle, name): ask cgi_dlsym_route, keeping the arguments, then jump
 * to what it answered (the return address stays the caller's), or to
 * cgi_dlsym_hidden. Each is given the caller's return address as its third
 * argument. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        ".cfi_startproc\n"
        "    movq (%rsp), %rdx\n"
        "    pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    call cgi_dlsym_route\n"
        "    addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    testq %rax, %rax\n"
        "    jz 1f\n"
        "    jmp *%rax\n"
        "1:  movq (%rsp), %rdx\n"
        "    jmp cgi_dlsym_hidden\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n");

#endif
