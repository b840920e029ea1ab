/* callguard/threads.h: the specs' per-handle thread rules (docs/threads.md).
 * Included by callguard/callguard.h.
 *
 * Each entry point's policy section names the handle parameters it touches
 * (writes, reads, destroys; sets and launches for the sequence rule), and
 * the layer carries them as a table. With checks on, two threads inside
 * calls that the rules forbid to overlap on one handle are reported, and
 * so is another thread's setting of a kernel's arguments between one
 * thread's setting and its launch. With per-handle serialization on, the
 * same rules become reader/writer locks around each call.
 *
 * A lock around each call cannot make a sequence of calls atomic (set the
 * arguments, then launch): a binding holds the handle across it instead,
 *
 *     cg_handle_hold(kernel);
 *     clSetKernelArg(kernel, 0, ...); clSetKernelArg(kernel, 1, ...);
 *     clEnqueueNDRangeKernel(queue, kernel, ...);
 *     cg_handle_release(kernel);
 *
 * as oneAPI.jl's per-kernel lock does. A hold excludes other holds of the
 * handle, and, with per-handle serialization on, other threads' calls on
 * it; the holder's own calls go through. For the checker a hold is a write
 * of the handle for as long as it lasts. */
#ifndef CALLGUARD_THREADS_H
#define CALLGUARD_THREADS_H

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* Checks of the thread rules on (1) or off (0); CALLGUARD_CHECK=threads at
 * start-up, `callguard run --check-threads`. Violations go in the report. */
int cg_check_threads(int on);

/* Per-handle locks from the thread rules on (1) or off (0);
 * CALLGUARD_SERIALIZE_HANDLES=yes, `callguard run --serialize-handles`.
 * Switch it while no other thread is inside a guarded call. */
int cg_serialize_handles(int on);

/* Holds `handle` (any driver object: a cl_kernel, a ze_kernel_handle_t)
 * for the calling thread until cg_handle_release. Waits while another
 * thread holds it, outside the host runtime (the GIL is released while it
 * waits, when the CPython adapter is active). Holds nest: each hold needs
 * its release. A thread holds at most 16 handles at once. Locks are
 * striped by handle value, so two handles may share one: hold handles in
 * one order everywhere, as with any set of locks.
 * CG_EINVAL for NULL; CG_ENOMEM past 16. */
int cg_handle_hold(const void *handle);
/* CG_EINVAL when the calling thread does not hold it. */
int cg_handle_release(const void *handle);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
