/* Is the guarded call a thread looks inside still on its stack? A thread
 * that jumped out of a call (a signal handler's siglongjmp out of the
 * driver) still looks inside it: its depth and its slot say so, and its
 * next calls would be nested, going straight to the driver past every
 * lock. The calls that look inside are few: a driver callback's or a
 * signal handler's call made inside another, and the first call after
 * such a jump. So the question is asked there, not recorded on the way
 * in: the stack is walked with libgcc's unwinder, as glibc's backtrace()
 * does, from the current call's frames (the runtime's, then its layer's)
 * outwards. A frame of callguard's above them is the call it is inside.
 * The walk says the call is gone only when it reached the thread's first
 * frame (the unwinder reports the frame above _start or clone3 with a
 * return address of 0) without meeting one; a walk cut short (a frame
 * without unwind information, another stack) says nothing, and the call
 * stays nested as before.
 *
 * A walk costs microseconds, and a driver callback may make many calls
 * inside one outer call: the outer call's frame found is remembered (the
 * stack word holding its return address) and a later nested call that
 * finds the word still on the live stack, holding the same address, walks
 * no more. A word below the stack pointer, or overwritten, is no longer
 * that frame's. */
#define _GNU_SOURCE
#include "onstack.h"

#include "resolve.h"

#include <dlfcn.h>
#include <unwind.h>

/* The deepest stack walked; a deeper one is not told. */
#define CGI_WALK_MAX 4096

typedef _Unwind_Reason_Code (*cgi_backtrace_fn)(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr (*cgi_getip_fn)(struct _Unwind_Context *);
typedef _Unwind_Word (*cgi_getcfa_fn)(struct _Unwind_Context *);

static cgi_backtrace_fn _Atomic cgi_backtrace;
static cgi_getip_fn cgi_getip;
static cgi_getcfa_fn cgi_getcfa;
static pthread_once_t cgi_onstack_once = PTHREAD_ONCE_INIT;

/* libgcc_s, not a link dependency (libcallguard needs only glibc): glibc
 * opens the same library for its backtrace() and thread cancellation. */
static void cgi_onstack_load(void)
{
    void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return;
    cgi_getip = (cgi_getip_fn)dlsym(h, "_Unwind_GetIP");
    cgi_getcfa = (cgi_getcfa_fn)dlsym(h, "_Unwind_GetCFA");
    cgi_backtrace_fn bt = (cgi_backtrace_fn)dlsym(h, "_Unwind_Backtrace");
    if (cgi_getip && cgi_getcfa && bt) atomic_store_explicit(&cgi_backtrace, bt, memory_order_release);
}

void cgi_onstack_prime(void) { pthread_once(&cgi_onstack_once, cgi_onstack_load); }

typedef struct cgi_walk {
    const void *own[2]; /* the current call's objects: the runtime and its layer */
    unsigned frames;
    cgi_onstack_seen *seen;
    int past;  /* past the current call's own frames */
    int found; /* met a frame of callguard's beyond them */
    int ended; /* reached the thread's first frame */
} cgi_walk;

static _Unwind_Reason_Code cgi_walk_frame(struct _Unwind_Context *ctx, void *arg)
{
    cgi_walk *w = arg;
    uintptr_t ip = cgi_getip(ctx);
    if (ip == 0) {
        w->ended = 1;
        return _URC_END_OF_STACK;
    }
    if (++w->frames > CGI_WALK_MAX) return _URC_END_OF_STACK;
    Dl_info info;
    /* ip - 1: inside the call instruction, so a call that ends its function still names it. */
    const void *base = dladdr((void *)(ip - 1), &info) ? info.dli_fbase : NULL;
    if (!w->past) {
        if (base && (base == w->own[0] || base == w->own[1])) return _URC_NO_REASON;
        w->past = 1;
    }
    if (base && cgi_is_callguard_base(base)) {
        w->found = 1;
        /* The word holding its return address: below the CFA of the frame it
         * called (x86-64), which is what the context says here, before it is
         * moved to this frame. Kept only where it holds the address. */
        uintptr_t cfa = (uintptr_t)cgi_getcfa(ctx);
        const uintptr_t *word = (const uintptr_t *)(cfa - sizeof(uintptr_t));
        if (cfa && *word == ip) w->seen->word = word, w->seen->ip = ip;
        return _URC_END_OF_STACK;
    }
    return _URC_NO_REASON;
}

/* Is the frame a walk found still there? Its word is on the live stack
 * (not below this frame) and holds its return address. Not instrumented:
 * the word may lie in another frame's redzone. */
__attribute__((noinline, no_sanitize_address)) static int cgi_seen_still(const cgi_onstack_seen *seen)
{
    volatile char here = 0;
    return seen->word && (uintptr_t)seen->word > (uintptr_t)&here && *seen->word == seen->ip;
}

int cgi_outer_call_on_stack(const cg_layer *current, cgi_onstack_seen *seen)
{
    if (cgi_seen_still(seen)) return 1;
    seen->word = NULL;
    cgi_backtrace_fn bt = atomic_load_explicit(&cgi_backtrace, memory_order_acquire);
    if (!bt) return 1;
    cgi_walk w = {.seen = seen};
    Dl_info info;
    if (dladdr((const void *)cgi_outer_call_on_stack, &info)) w.own[0] = info.dli_fbase;
    if (dladdr(current, &info)) w.own[1] = info.dli_fbase;
    bt(cgi_walk_frame, &w);
    return w.found || !w.ended;
}
