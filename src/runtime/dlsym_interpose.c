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
 * Every other look-up is glibc's own, reached by a tail jump: dlsym() tells
 * RTLD_NEXT (and RTLD_DEFAULT's scope) by its caller's return address, which
 * the jump keeps. Hence the few lines of assembly; x86-64 only, elsewhere no
 * dlsym is defined here (docs/design.md, "What a program sees"). A file of its
 * own, like signals_interpose.c: the fuzz harnesses link the runtime's
 * objects statically and must not get a dlsym. */
#define _GNU_SOURCE
#include "resolve.h"
#include "site.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>

#if defined(__x86_64__) && defined(__ELF__)

/* Not instrumented: sanitizer runtimes call dlsym while they start, before
 * instrumented code may run. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define CGI_UNINSTRUMENTED __attribute__((no_sanitize_thread, no_sanitize_address, no_sanitize_undefined))
#else
#define CGI_UNINSTRUMENTED
#endif

typedef void *(*cgi_dlsym_fn)(void *, const char *);
static cgi_dlsym_fn _Atomic cgi_real_dlsym;

/* glibc's dlsym: the next definition after libcallguard (libc's, or another
 * interposer's preloaded after it), by its default version, else the only
 * one (glibc before 2.34 keeps it in libdl as GLIBC_2.2.5). */
CGI_UNINSTRUMENTED static cgi_dlsym_fn cgi_dlsym_lookup(void)
{
    cgi_dlsym_fn f = atomic_load_explicit(&cgi_real_dlsym, memory_order_acquire);
    if (f) return f;
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
    for (unsigned i = 0; !f && i < sizeof versions / sizeof *versions; i++)
        *(void **)&f = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    for (unsigned i = 0; !f && i < sizeof versions / sizeof *versions; i++) {
        void *h = dlopen(i ? "libdl.so.2" : "libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        if (h) *(void **)&f = dlvsym(h, "dlsym", versions[i]);
    }
    atomic_store_explicit(&cgi_real_dlsym, f, memory_order_release);
    return f;
}

/* Does `name` start with one of a registered layer's prefixes? */
static int cgi_layer_name(const char *name)
{
    for (cg_layer *l = __atomic_load_n(&cgi_layers, __ATOMIC_ACQUIRE); l; l = l->next)
        for (const char *p = l->prefixes; p && *p;) {
            size_t n = strcspn(p, ",");
            if (n && strncmp(name, p, n) == 0) return 1;
            p += n + (p[n] == ',');
        }
    return 0;
}

/* 1 when a global look-up of `name` would find a layer's export although no
 * library of the program's defines the name: plainly it finds nothing. */
static int cgi_dlsym_hides(const char *name, cgi_dlsym_fn real)
{
    if (!cgi_layer_name(name)) return 0;
    void *p = real(RTLD_DEFAULT, name);
    /* NULL from a layer's IFUNC whose real function no library defines (MPI_Send_c on Open MPI 4.1,
     * docs/configuration.md, "Other ABIs"): glibc answers NULL but sets no dlerror(); plainly the look-up
     * fails with it. */
    if (!p) return 1;
    if (!cgi_is_callguard_object(p)) return 0;
    return cgi_search_loaded(name) == NULL;
}

/* Called by the trampoline below with dlsym's arguments: the function to
 * jump to (glibc's dlsym, the caller's frame untouched), or NULL to answer
 * as a failed look-up (cgi_dlsym_hidden). */
CGI_UNINSTRUMENTED __attribute__((used)) CGI_HIDDEN cgi_dlsym_fn cgi_dlsym_route(void *handle, const char *name)
{
    cgi_dlsym_fn real = cgi_dlsym_lookup();
    if (!real || !name) return real;
    if (handle != RTLD_DEFAULT && handle != (void *)_r_debug.r_map) return real;
    if (!__atomic_load_n(&cgi_layers, __ATOMIC_ACQUIRE)) return real;
    int saved = errno;
    int hide = cgi_dlsym_hides(name, real);
    errno = saved;
    return hide ? NULL : real;
}

/* A failed look-up's answer: NULL, and dlerror() saying the name is
 * undefined (glibc's own message, from a look-up in libc's handle). */
__attribute__((used)) CGI_HIDDEN void *cgi_dlsym_hidden(void *handle, const char *name)
{
    (void)handle;
    int saved = errno;
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    cgi_dlsym_fn real = cgi_dlsym_lookup();
    if (libc && real) {
        void *p = real(libc, name);
        (void)p;
    }
    errno = saved;
    return NULL;
}

/* dlsym(handle, name): ask cgi_dlsym_route, keeping the arguments, then jump
 * to what it answered (the return address stays the caller's), or to
 * cgi_dlsym_hidden. */
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        ".cfi_startproc\n"
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
        "1:  jmp cgi_dlsym_hidden\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n");

#endif
