/* bench_callgrind.h: callgrind's client requests where valgrind's header is
 * installed (CG_BENCH_CALLGRIND 1), none otherwise: the benchmarks then time
 * only. Shared by bench_call.c and bench_threads.c. */
#ifndef CG_BENCH_CALLGRIND_H
#define CG_BENCH_CALLGRIND_H

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define CG_BENCH_CALLGRIND 1
#endif
#endif
#ifndef CG_BENCH_CALLGRIND
#define CG_BENCH_CALLGRIND 0
#endif

#endif
