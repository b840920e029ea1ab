/* The Ruby adapter (CRuby 2.6 and later): libcallguard_ruby.a, linked into
 * the binding's extension, whose libruby provides the symbols.
 *
 * Leaving the GVL: rb_thread_call_without_gvl2 (rb_nogvl with
 * RB_NOGVL_INTR_FAIL), not rb_thread_call_without_gvl: the latter checks
 * interrupts before and after the call and may raise there (Thread#raise,
 * Thread#kill, a signal trap that raises), a longjmp through the layer's
 * wrapper and cg_call that skips their ends, and after the driver call has
 * happened loses its result. The "2" form never raises; when an interrupt
 * is pending it returns without calling at all, and then the call is made
 * with the GVL held (it must happen: the caller asked for it), and Ruby
 * handles the interrupt at its next check, after the guarded call returns.
 * Pending interrupts include Ruby's thread switch: once another thread has
 * waited a time slice (100 ms) for the GVL, the holder gets one. So a
 * binding that ran C code with the GVL held that long before the guarded
 * call makes it with the GVL held; cg_adapter_ran_held() lets the report
 * show it as a stall.
 * No unblocking function: a driver call cannot be interrupted, so an
 * interrupt that arrives meanwhile waits for it to return. */
#include <callguard/adapters.h>

/* From <ruby/thread.h> and <ruby/thread_native.h> (Ruby 3.1). */
typedef void rb_unblock_function_t(void *);
extern void *rb_thread_call_without_gvl2(void *(*func)(void *), void *data1, rb_unblock_function_t *ubf, void *data2);
extern int ruby_thread_has_gvl_p(void);

typedef struct cgr_call {
    void (*fn)(void *);
    void *arg;
    int ran;
} cgr_call;

static void *cgr_outside(void *p)
{
    cgr_call *c = p;
    c->ran = 1;
    c->fn(c->arg);
    return NULL;
}

/* A thread Ruby does not know, or one inside a blocking region: 0. */
static int cgr_holds(void) { return ruby_thread_has_gvl_p(); }

static void cgr_call_outside(void (*fn)(void *), void *arg)
{
    cgr_call c = {fn, arg, 0};
    /* errno: cg_call keeps what the driver call left (re-taking the GVL may change it). */
    rb_thread_call_without_gvl2(cgr_outside, &c, NULL, NULL);
    if (!c.ran) {
        /* An interrupt was pending: call with the GVL held, and say so, so
         * that the call is counted as held (a stall when it lasts one). */
        cg_adapter_ran_held();
        fn(arg);
    }
}

static const cg_adapter cgr_adapter = {"ruby", cgr_holds, cgr_call_outside};

const cg_adapter *cg_adapter_ruby(void) { return &cgr_adapter; }
