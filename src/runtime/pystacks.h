/* Every Python thread's stack, on a reader's request (pystacks.c;
 * src/common/stats_file.h, "the threads area"; docs/report.md, "Live:
 * callguard status"). The watchdog checks one word of the statistics
 * header at each tick (watchdog.c); when a reader has asked since its last
 * answer, it calls this, which reads every thread of the interpreter from
 * memory (pyread.h, pynames.h: no CPython call, no fault, bounded) and
 * writes them into the threads area with pwrite. No guarded call pays
 * anything for it. */
#ifndef CGI_PYSTACKS_H
#define CGI_PYSTACKS_H

#include "internal.h"

/* Answers request `ask` (the header's threads.ask): the threads into the
 * area, the answer's head into the header, threads.done = ask last. On
 * the watchdog's thread only (its buffers are its own). */
CGI_HIDDEN void cgi_pystacks_answer(uint32_t ask);

#endif
