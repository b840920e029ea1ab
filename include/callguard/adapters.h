/* callguard/adapters.h: host-runtime adapters that a binding switches on.
 *
 * Each lives in its own small static library, linked into the program or
 * extension that uses it, next to libcallguard (which has no link
 * dependency on any of these runtimes):
 *
 *   cg_adapter_ocaml()  libcallguard_ocaml.a  OCaml 4.x with systhreads
 *   cg_adapter_ruby()   libcallguard_ruby.a   Ruby (CRuby) 2.6 and later
 *
 * None is ever detected: the binding that makes driver calls from the
 * runtime switches its adapter on, once, from a thread of that runtime that
 * holds the runtime lock (an OCaml stub, a Ruby method), e.g.
 *
 *     cg_set_adapter(cg_adapter_ocaml(), CG_ADAPTER_ACTIVE);
 *
 * (CG_ADAPTER_DETECT only reports stalls). Then every guarded call whose
 * site's transition says so leaves the runtime around the driver call.
 * docs/adapters.md says what each one does and what it cannot.
 */
#ifndef CALLGUARD_ADAPTERS_H
#define CALLGUARD_ADAPTERS_H

#include <callguard/callguard.h>

#ifdef __cplusplus
extern "C" {
#endif

/* OCaml (libcallguard_ocaml.a). Leaves the master lock with
 * caml_enter_blocking_section_no_pending / caml_leave_blocking_section, so
 * a pending signal is handled by OCaml after the guarded call returns,
 * never raised through it. The first call installs the adapter's
 * blocking-section hooks (chained to the runtime's), which is how holds()
 * knows which threads hold the lock: call it after the Thread module is
 * initialized (from any stub of a program linked with threads.cmxa). */
const cg_adapter *cg_adapter_ocaml(void);

/* Ruby (libcallguard_ruby.a). Leaves the GVL with
 * rb_thread_call_without_gvl2, which never raises; when a pending
 * interrupt keeps it from running the call, the call is made with the GVL
 * held, and Ruby handles the interrupt after the guarded call returns. */
const cg_adapter *cg_adapter_ruby(void);

#ifdef __cplusplus
}
#endif
#endif
