/* Which clock a trace's times are on (trace_clock.c): the boot and time
 * namespace whose CLOCK_MONOTONIC they are, and a TSC calibration made
 * again over the whole run where the merge runs on that clock. */
#ifndef CGI_TRACE_CLOCK_H
#define CGI_TRACE_CLOCK_H

#include "../common/trace_file.h"

/* This process's clock: boot[40] from /proc/sys/kernel/random/boot_id
 * ("" where unreadable) and *time_ns the inode of its time namespace
 * (CGI_TRACE_NO_TIMENS: the kernel has none; 0: not known). */
CGI_HIDDEN void cgi_trace_clock_id(char boot[40], uint64_t *time_ns);

/* c's calibration (its first sample, tick0 and mono0, a few milliseconds
 * after its process started) made again from that sample to a sample read
 * now: the same counter, so the slope is the run's, not the first
 * milliseconds'. Only for a clock of this process's boot and time
 * namespace with a TSC; c->span_ns says over how long (0: not made again). */
CGI_HIDDEN void cgi_trace_clock_refine(cgi_trace_clock *c);

#endif
