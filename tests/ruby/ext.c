/* The binding glue of the Ruby tests: a C extension (CgToy) of the kind a
 * Ruby binding of a driver is. Its methods call the toy API through the toy
 * layer the way a naive binding does, with the GVL held; switching the
 * adapter on is one call. Linked with libcallguard_ruby.a. */
#include <callguard/adapters.h>
#include <ruby.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <toy.h>

static toy_device_t dev(void)
{
    toy_device_t d = NULL;
    toyGetDevice(0, &d);
    return d;
}

/* "none", "detect" (stalls reported only) or "active" */
static VALUE cgr_adapter(VALUE self, VALUE mode)
{
    (void)self;
    const char *m = StringValueCStr(mode);
    cg_stats_enable(1);
    if (strcmp(m, "none") == 0)
        cg_set_adapter(NULL, CG_ADAPTER_DETECT);
    else
        cg_set_adapter(cg_adapter_ruby(), strcmp(m, "active") == 0 ? CG_ADAPTER_ACTIVE : CG_ADAPTER_DETECT);
    return Qnil;
}

static VALUE cgr_wait(VALUE self, VALUE ms)
{
    (void)self;
    toyWait(dev(), NUM2UINT(ms)); /* the GVL is held here */
    return Qnil;
}

/* A binding that first runs C code for spin_ms with the GVL held (a
 * thread waiting for the GVL meanwhile makes Ruby post its thread-switch
 * interrupt to this one), then makes the guarded call: the adapter finds
 * the interrupt pending and makes the call with the GVL held. */
static VALUE cgr_spin_then_wait(VALUE self, VALUE spin_ms, VALUE ms)
{
    (void)self;
    toy_device_t d = dev();
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double limit = NUM2UINT(spin_ms) / 1e3;
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < limit);
    toyWait(d, NUM2UINT(ms));
    return Qnil;
}

/* A signal arrives just before the guarded call: Ruby's trap for it is a
 * pending interrupt when the adapter leaves the GVL. Returns the toy wait's
 * result; the trap must run after this returns, not inside it. */
static int last_result = -1;

static VALUE cgr_wait_signal_pending(VALUE self, VALUE ms)
{
    (void)self;
    toy_device_t d = dev();
    raise(SIGUSR1);
    last_result = toyWait(d, NUM2UINT(ms));
    return INT2NUM(last_result);
}

/* The trap may raise as soon as the method returns, before its value is
 * assigned: the result is kept here too. */
static VALUE cgr_last_result(VALUE self)
{
    (void)self;
    return INT2NUM(last_result);
}

static VALUE cgr_holds(VALUE self)
{
    (void)self;
    return cg_adapter_ruby()->holds() ? Qtrue : Qfalse;
}

static void *holds_here(void *out)
{
    *(int *)out = cg_adapter_ruby()->holds();
    return NULL;
}

/* holds() on a thread Ruby does not know (a driver's own thread, say). A
 * thread that cannot be made (a loaded machine's thread limit) raises,
 * naming why, rather than reading as a wrong holds(). */
static VALUE cgr_holds_on_c_thread(VALUE self)
{
    (void)self;
    int held = -1;
    pthread_t t;
    int e = pthread_create(&t, NULL, holds_here, &held);
    if (e != 0) rb_raise(rb_eRuntimeError, "cannot create a C thread to ask holds() on: %s", strerror(e));
    pthread_join(t, NULL);
    return held != 0 ? Qtrue : Qfalse;
}

static VALUE cgr_stats(VALUE self, VALUE name)
{
    (void)self;
    cg_site_stats st = {0};
    cg_get_stats(StringValueCStr(name), &st);
    /* calls, stalls, and for the message of a failure the longest call and the stall time (ns) */
    return rb_ary_new_from_args(4, ULL2NUM(st.calls), ULL2NUM(st.stalls), ULL2NUM(st.max_ns), ULL2NUM(st.stall_ns));
}

/* The build hides symbols by default; Ruby looks this one up. */
__attribute__((visibility("default"))) void Init_cgtoyrb(void)
{
    VALUE m = rb_define_module("CgToy");
    rb_define_module_function(m, "adapter", cgr_adapter, 1);
    rb_define_module_function(m, "wait", cgr_wait, 1);
    rb_define_module_function(m, "spin_then_wait", cgr_spin_then_wait, 2);
    rb_define_module_function(m, "wait_signal_pending", cgr_wait_signal_pending, 1);
    rb_define_module_function(m, "last_result", cgr_last_result, 0);
    rb_define_module_function(m, "holds", cgr_holds, 0);
    rb_define_module_function(m, "holds_on_c_thread", cgr_holds_on_c_thread, 0);
    rb_define_module_function(m, "stats", cgr_stats, 1);
}
