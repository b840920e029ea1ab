/* Per-handle locks (hlock.c): one reader/writer lock per handle value,
 * for the thread rules' locks, cg_handle_hold and handle-scoped domains. */
#ifndef CGI_HLOCK_H
#define CGI_HLOCK_H

#include "internal.h"

/* A handle's lock. Live while held or waited for; its memory is never
 * freed, so a pointer to it stays valid (a stale one just names a lock of
 * another handle, which is why only a holder keeps one). */
typedef struct cgi_hl cgi_hl;

/* The lock of `handle` (not 0) in `space` (0: the thread rules and holds;
 * a domain's id: that domain's handle scope), taken shared or exclusive.
 * try: NULL when another thread holds it in a way that excludes this one
 * (or a writer waits for it and this is a reader), without waiting.
 * lock: waits until it is free (the caller holds no other handle lock of
 * its call then). */
CGI_HIDDEN cgi_hl *cgi_hl_try(uint32_t space, uintptr_t handle, int write);
CGI_HIDDEN cgi_hl *cgi_hl_lock(uint32_t space, uintptr_t handle, int write);
/* Releases what try or lock returned, as it was taken. */
CGI_HIDDEN void cgi_hl_unlock(cgi_hl *l, int write);

/* The child of fork: only its one thread is left, so no lock is held or waited for. */
CGI_HIDDEN void cgi_hl_after_fork_child(void);

#endif
