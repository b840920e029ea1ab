/* The Julia adapter: a thread of Julia's waits in the driver GC-safe, as
 * GPUToolbox's @gcsafe_ccall and Julia 1.12's `@ccall gc_safe=true` make
 * it, so that another thread's collection need not wait for the call.
 *
 * No link dependency on libjulia: its three functions are looked up in the
 * running process once, at the first question (libjulia-internal, which
 * defines jl_gc_safe_enter/leave, is loaded RTLD_GLOBAL by libjulia's
 * constructor, after callguard's may have run). Julia 1.7 and later export
 * all three; docs/adapters.md gives the sources. Anything missing: the
 * adapter holds nothing anywhere and never calls into Julia.
 *
 * holds(): a thread Julia knows (jl_get_pgcstack() non-NULL; NULL on one
 * Julia never adopted, where the other two would crash) that is GC-unsafe.
 * Julia exports no read of a thread's GC state (it lives in the thread's
 * jl_tls_states_t, whose layout changes between versions), so holds() asks
 * the one way the API allows: jl_gc_safe_enter() returns the state it
 * replaced and jl_gc_safe_leave() puts it back at once, a zero-length
 * @gcsafe_ccall, legal wherever a ccall is (the way back to GC-unsafe is a
 * safepoint: it waits out a collection already running). So a thread that
 * is GC-safe already (a package calling through @gcsafe_ccall) holds
 * nothing: its calls are no stalls and are not left a second time. */
#define _GNU_SOURCE
#include "julia.h"

#include "probe.h"
#include <pthread.h>

/* Julia's GC states (julia_threads.h): a thread running Julia code is
 * unsafe; the collector waits for every thread to be something else. */
enum { CGI_JL_GC_UNSAFE = 0 };

static struct {
    int ok;
    void *(*get_pgcstack)(void);
    int8_t (*safe_enter)(void);
    void (*safe_leave)(int8_t);
} cgi_jl;
static pthread_once_t cgi_jl_once = PTHREAD_ONCE_INIT;

static void cgi_jl_lookup(void)
{
    *(void **)&cgi_jl.get_pgcstack = cgi_probe_sym(RTLD_DEFAULT, "jl_get_pgcstack");
    *(void **)&cgi_jl.safe_enter = cgi_probe_sym(RTLD_DEFAULT, "jl_gc_safe_enter");
    *(void **)&cgi_jl.safe_leave = cgi_probe_sym(RTLD_DEFAULT, "jl_gc_safe_leave");
    cgi_jl.ok = cgi_jl.get_pgcstack && cgi_jl.safe_enter && cgi_jl.safe_leave;
}

static int cgi_jl_holds(void)
{
    pthread_once(&cgi_jl_once, cgi_jl_lookup);
    if (!cgi_jl.ok || !cgi_jl.get_pgcstack()) return 0;
    int8_t was = cgi_jl.safe_enter();
    cgi_jl.safe_leave(was);
    return was == CGI_JL_GC_UNSAFE;
}

/* Called only after holds() said yes, on the same thread. A driver
 * callback into Julia during fn (an @cfunction) makes the thread GC-unsafe
 * for the callback and GC-safe again when it returns, by itself; a guarded
 * call it makes is nested and goes straight to the driver. errno: cg_call
 * keeps what the driver call left (the safepoint may change it). */
static void cgi_jl_call_outside(void (*fn)(void *), void *arg)
{
    int8_t was = cgi_jl.safe_enter();
    fn(arg);
    cgi_jl.safe_leave(was);
}

static const cg_adapter cgi_julia_adapter = {"julia", cgi_jl_holds, cgi_jl_call_outside};

const cg_adapter *cg_adapter_julia(void) { return &cgi_julia_adapter; }

/* libjulia itself (the `julia` program links it) defines jl_get_pgcstack
 * from start-up on, whichever constructor ran first. */
const cg_adapter *cgi_julia_adapter_if_present(void)
{
    return cgi_probe_sym(RTLD_DEFAULT, "jl_get_pgcstack") ? &cgi_julia_adapter : NULL;
}
