/* The OCaml adapter (OCaml 4.x, systhreads): libcallguard_ocaml.a, linked
 * into the OCaml program with the binding's stubs. The runtime's symbols
 * come from that program (libasmrun/libcamlrun and libthreads), never from
 * libcallguard.
 *
 * Leaving the runtime: caml_enter_blocking_section can raise (it runs the
 * OCaml handlers of pending signals first, and a handler may raise), and an
 * exception raised there would unwind through the layer's wrapper and
 * cg_call without running their ends: the driver never called, callguard's
 * nesting count left high. So the adapter enters with
 * caml_enter_blocking_section_no_pending, which only releases the master
 * lock; caml_leave_blocking_section never raises (it marks signals that
 * arrived meanwhile as pending), so OCaml runs the handlers at its next
 * poll, after the guarded call has returned to the stub.
 *
 * holds(): OCaml 4 cannot be asked whether this thread holds the master
 * lock. The adapter keeps that per thread itself, from the runtime's own
 * blocking-section hooks, which it wraps (chaining to what was installed:
 * systhreads' functions): leaving sets it, entering clears it. The thread
 * that switches the adapter on holds the lock (it is in a stub) and is
 * marked so; every other thread of OCaml's passes the leave hook before it
 * runs OCaml (Thread.create's threads when they start, C threads after
 * caml_c_thread_register), so a thread OCaml does not know is never taken
 * to hold it. If someone replaced the hooks after the adapter (they are no
 * longer the adapter's), holds() says 0: calls are made without leaving. */
#include <callguard/adapters.h>

#include <stdatomic.h>

/* From <caml/signals.h> and <caml/threads.h> (OCaml 4.13). */
extern void caml_enter_blocking_section_no_pending(void);
extern void caml_leave_blocking_section(void);
extern void (*caml_enter_blocking_section_hook)(void);
extern void (*caml_leave_blocking_section_hook)(void);

static __thread int cgo_held;
static void (*cgo_prev_enter)(void), (*cgo_prev_leave)(void);

static void cgo_enter_hook(void)
{
    cgo_held = 0;
    cgo_prev_enter();
}

static void cgo_leave_hook(void)
{
    cgo_prev_leave();
    cgo_held = 1;
}

static int cgo_holds(void) { return caml_enter_blocking_section_hook == cgo_enter_hook && cgo_held; }

static void cgo_call_outside(void (*fn)(void *), void *arg)
{
    caml_enter_blocking_section_no_pending();
    fn(arg);
    caml_leave_blocking_section(); /* keeps errno (OCaml PR#5982) */
}

static const cg_adapter cgo_adapter = {"ocaml", cgo_holds, cgo_call_outside};

/* Called with the master lock held (from a stub), so the hooks are swapped
 * with no OCaml thread running in between. */
const cg_adapter *cg_adapter_ocaml(void)
{
    if (caml_enter_blocking_section_hook != cgo_enter_hook) {
        cgo_prev_enter = caml_enter_blocking_section_hook;
        cgo_prev_leave = caml_leave_blocking_section_hook;
        /* A thread leaving its blocking section reads the hook without the
         * lock: it must find cgo_prev_leave set once it sees the new hook. */
        atomic_thread_fence(memory_order_release);
        caml_leave_blocking_section_hook = cgo_leave_hook;
        caml_enter_blocking_section_hook = cgo_enter_hook;
    }
    cgo_held = 1;
    return &cgo_adapter;
}
