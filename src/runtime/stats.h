/* The statistics region (stats.c).
 * One region per process, laid out as src/common/stats_file.h says so
 * another process (the CLI) can read it. When CALLGUARD_STATS_DIR names a
 * directory the region becomes a shared mapping of a file there at the
 * process's first guarded call, so counts and calls in flight survive
 * abort(), _exit() and exec(); a process that makes none leaves no file. */
#ifndef CGI_STATS_H
#define CGI_STATS_H

#include "internal.h"
#include "../common/stats_file.h"

CGI_HIDDEN extern cgi_stats_region *cgi_stats;
CGI_HIDDEN int cgi_stats_init(const char *dir);
/* Makes the process's statistics file at its first guarded call, when
 * CALLGUARD_STATS_DIR named a directory and none was made yet. Caller
 * holds cgi_cfg_lock; before the thread claims its slot. */
CGI_HIDDEN void cgi_stats_keep(void);
CGI_HIDDEN void cgi_stats_after_fork_child(void);
/* A descriptor of this process's own statistics file, read-write and
 * close-on-exec, above fd 2, opened again by its path and checked to be
 * the file the region is mapped from (its device and inode); -1 where the
 * process has none (counting in memory) or it is not there any more.
 * For the watchdog's answers into the threads area (pystacks.c); the
 * caller closes it. */
CGI_HIDDEN int cgi_stats_open_own(void);
/* The record of a site (one per api and name). Caller holds cgi_cfg_lock. */
CGI_HIDDEN cg_counters *cgi_stats_record_site(const char *api, const char *name);
/* The row "NAME@TAG" of the site whose record is ctr, with its policy; NULL when the name is too long or the
 * records ran out. Caller holds cgi_cfg_lock. */
CGI_HIDDEN cg_counters *cgi_stats_record_row(const char *api, cg_counters *ctr, const char *tag);
/* Mirrors a site's policy into its record so reports show it. Caller holds cgi_cfg_lock. */
CGI_HIDDEN void cgi_stats_note_policy(cg_site *s);
/* The first call of a site its policy leaves uncounted went through (its record's CGI_UNCOUNTED_CALLED). */
CGI_HIDDEN void cgi_stats_note_uncounted_call(cg_site *s);
/* A call through a closed once-gate ended, its lock still held: its number
 * among them (1 the first), 0 where the site has no record. */
CGI_HIDDEN uint64_t cgi_stats_once_ran(cg_counters *c);
/* A site of scope once serialized in `domain` opened at the call
 * cgi_stats_once_ran numbered `ran`, or a later one did: the least is kept
 * in its record for the report. Caller holds cgi_cfg_lock. */
CGI_HIDDEN void cgi_stats_note_open(cg_site *s, const char *domain, uint64_t ran);
/* Sets the codes that report a state at a site (and marks the codes it
 * already counted). Caller holds cgi_cfg_lock. */
CGI_HIDDEN void cgi_stats_set_states(cg_site *s, const int32_t *codes, unsigned n);
/* Counts a result other than success (a thunk's nonzero return) at the
 * site whose counters are c: a failure or a state. Returns 1 for a
 * failure. Off the success path; touches no errno. */
CGI_HIDDEN int cgi_stats_result(cg_counters *c, int err);
/* The state the wrapper counts itself at the site whose counters are c (its
 * record's inline_state; 0 for none or no record): what the site keeps in
 * its first line (layer.h, cg_slot_state). */
CGI_HIDDEN int32_t cgi_stats_inline_state(cg_counters *c);

/* This thread's slot; cgi_unclaimed_slot until its first timed call claims
 * one, cgi_spare_slot when none was free. Those two are never written, and
 * their `counters` is &cgi_no_counters: they look inside a call. */
CGI_HIDDEN extern __thread cgi_slot *cgi_my_slot __attribute__((tls_model("initial-exec")));
CGI_HIDDEN extern cgi_slot cgi_unclaimed_slot, cgi_spare_slot;
/* Makes `slot` this thread's (cgi_my_slot), and the wrapper's (cg_my_slot)
 * when its counts are its own: else the wrapper's is cgi_unclaimed_slot,
 * which looks inside a call, and its calls go to cg_enter. */
static inline void cgi_slot_set(cgi_slot *slot)
{
    cgi_my_slot = slot;
    cg_my_slot = (cg_slot *)(slot->owned ? slot : &cgi_unclaimed_slot);
}
CGI_HIDDEN extern cg_counters cgi_no_counters;
/* Slots ever claimed in this region are below this index (a claim takes
 * the first free one): after a fork, those are the ones to clear; the
 * watchdog reads those. */
CGI_HIDDEN extern _Atomic unsigned cgi_slots_used;
/* Claims a slot for this thread (cgi_spare_slot when none is free). */
CGI_HIDDEN cgi_slot *cgi_slot_claim(void);
/* pthread_self() of the thread that claimed slot i (kept in this process's
 * memory, not the file: CPython 3.9 and 3.10 know their threads by it);
 * 0 when not known. */
CGI_HIDDEN unsigned long cgi_slot_pthread_id(unsigned i);

/* Keeps a stall in the list when it is among the worst; s->valid is ignored.
 * The caller fills everything else. */
CGI_HIDDEN void cgi_stats_keep_stall(const cgi_stall *s);
/* Records a quirk matched (the caller fills everything but valid); a
 * process keeps the first CGI_STATS_MAX_QUIRKS. */
CGI_HIDDEN void cgi_stats_note_quirk(const cgi_quirk_rec *q);
/* Adds api to the header's APIs probed for quirks (left out when it does
 * not fit: the report then says it does not know). */
CGI_HIDDEN void cgi_stats_note_probed(const char *api);

/* Forgets the kept stalls and the count of dropped ones. */
CGI_HIDDEN void cgi_stats_reset_stalls(void);
/* A site's calls now: its record's and shards' and the runs of this process's threads (layer.h,
 * cg_slot_enter), read as they are. */
CGI_HIDDEN uint64_t cgi_stats_calls(const cg_counters *c);
/* Forgets every thread's run (cg_reset_stats). */
CGI_HIDDEN void cgi_stats_end_runs(void);
/* Adds the thread's run to its shard (layer.h, cg_slot_run), on its own thread. */
CGI_HIDDEN void cgi_slot_end_run(cgi_slot *slot);
/* Before any path but the wrapper's numbers a call in the thread's slot: the run's calls are those numbered
 * past `from`, and this one is not the run's (first: a reader in between counts one call fewer, never more). */
static inline void cgi_slot_number_elsewhere(cgi_slot *slot) { cgi_bump(&slot->from, 1); }

#endif
