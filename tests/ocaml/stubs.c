/* The binding glue of the OCaml tests: what an OCaml binding of a driver
 * writes. Its stubs call the toy API through the toy layer the way a naive
 * binding does, with the master lock held; switching the adapter on is one
 * call. */
#include <callguard/adapters.h>
#include <caml/alloc.h>
#include <caml/fail.h>
#include <caml/memory.h>
#include <caml/mlvalues.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <toy.h>

static toy_device_t dev(void)
{
    toy_device_t d = NULL;
    toyGetDevice(0, &d);
    return d;
}

static const cg_adapter *adapter;

/* mode: 0 none, 1 detect only, 2 active */
value cg_ml_adapter(value mode)
{
    cg_stats_enable(1);
    int m = Int_val(mode);
    if (m == 0) {
        cg_set_adapter(NULL, CG_ADAPTER_DETECT);
    } else {
        adapter = cg_adapter_ocaml();
        cg_set_adapter(adapter, m == 2 ? CG_ADAPTER_ACTIVE : CG_ADAPTER_DETECT);
    }
    return Val_unit;
}

value cg_ml_wait(value ms)
{
    toyWait(dev(), (uint32_t)Int_val(ms)); /* the master lock is held here */
    return Val_unit;
}

/* A signal arrives just before the guarded call: OCaml's handler for it is
 * pending when the adapter leaves the runtime. Returns the toy wait's
 * result; the handler must run after this returns, not inside it. */
value cg_ml_wait_signal_pending(value ms)
{
    toy_device_t d = dev();
    raise(SIGUSR1);
    return Val_int(toyWait(d, (uint32_t)Int_val(ms)));
}

/* The adapter's holds() on the calling thread (not cg_adapter_ocaml()
 * again: that marks its caller as holding the lock). */
value cg_ml_holds(value unit)
{
    (void)unit;
    return Val_bool(adapter && adapter->holds());
}

/* toyWait's statistics: (calls, stalls, longest call in ns, stall time in
 * ns), the last two for the message of a failure. */
value cg_ml_stats(value name)
{
    CAMLparam1(name);
    CAMLlocal1(r);
    cg_site_stats st = {0};
    cg_get_stats(String_val(name), &st);
    r = caml_alloc_tuple(4);
    Store_field(r, 0, Val_long(st.calls));
    Store_field(r, 1, Val_long(st.stalls));
    Store_field(r, 2, Val_long(st.max_ns));
    Store_field(r, 3, Val_long(st.stall_ns));
    CAMLreturn(r);
}

/* Seconds on CLOCK_MONOTONIC. The pause is measured on it, as the Ruby and
 * Python pause tests measure theirs: Unix.gettimeofday is the wall clock,
 * which a clock step moves by any amount in the middle of the wait. */
value cg_ml_now(value unit)
{
    (void)unit;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return caml_copy_double((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
}

static void *holds_here(void *out)
{
    *(int *)out = adapter && adapter->holds();
    return NULL;
}

/* holds() on a thread OCaml does not know (a driver's own thread, say). A
 * thread that cannot be made (a loaded machine's thread limit) raises
 * Failure naming why, rather than reading as a wrong holds(). */
value cg_ml_holds_on_c_thread(value unit)
{
    (void)unit;
    int held = -1;
    pthread_t t;
    int e = pthread_create(&t, NULL, holds_here, &held);
    if (e != 0) {
        char msg[200];
        snprintf(msg, sizeof msg, "cannot create a C thread to ask holds() on: %s", strerror(e));
        caml_failwith(msg);
    }
    pthread_join(t, NULL);
    return Val_bool(held != 0);
}
