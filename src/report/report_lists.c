/* What a process of a saved report lists besides its sites, read back
 * into its region (report_lists.h). */
#define _GNU_SOURCE
#include "report_lists.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The string members of a list's entries, by key: each read into its
 * field (a fixed array: cut at its size). */
typedef struct cgi_str_member {
    const char *key;
    size_t off, cap;
} cgi_str_member;
/* An entry of such a table: {CGI_STR_MEMBER(type, "key", field)}. */
#define CGI_STR_MEMBER(type, key, field) key, offsetof(type, field), sizeof((type *)0)->field
#define CGI_COUNT(a) (sizeof(a) / sizeof *(a))

/* Reads the value of `key` into its field of `entry` when the table names
 * it; 0 (nothing read) when it does not. */
static int cgi_read_str_member(cgi_json *j, const char *key, void *entry, const cgi_str_member *t, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(key, t[k].key) == 0) {
            cgi_lex_str(j, (char *)entry + t[k].off, t[k].cap);
            return 1;
        }
    return 0;
}

/* A Python place: {"file": ..., "line": ..., "function": ...}, into the
 * stall's place (from: NULL) or its first frame outside the standard
 * library, with "importing" and (not from) "from" read too; or null. */
static void cgi_read_python(cgi_json *j, cgi_stall *st, int from)
{
    if (cgi_lex_word(j, "null") || !cgi_lex_expect(j, '{')) return;
    char *file = from ? st->from_file : st->py_file, *func = from ? st->from_func : st->py_func;
    size_t filecap = from ? sizeof st->from_file : sizeof st->py_file;
    size_t funccap = from ? sizeof st->from_func : sizeof st->py_func;
    do {
        char pk[16];
        int64_t v = 0;
        if (!cgi_lex_str(j, pk, sizeof pk) || !cgi_lex_expect(j, ':')) return;
        if (strcmp(pk, "file") == 0)
            cgi_lex_str(j, file, filecap);
        else if (strcmp(pk, "function") == 0)
            cgi_lex_str(j, func, funccap);
        else if (strcmp(pk, "line") == 0) {
            if (cgi_lex_num(j, &v)) *(from ? &st->from_line : &st->py_line) = (int32_t)v;
        } else if (!from && strcmp(pk, "from") == 0)
            cgi_read_python(j, st, 1);
        else if (!from && strcmp(pk, "importing") == 0)
            cgi_lex_str(j, st->import_file, sizeof st->import_file);
        else
            cgi_lex_skip(j);
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
}

static const cgi_str_member cgi_stall_strs[] = {
    {CGI_STR_MEMBER(cgi_stall, "api", api)},
    {CGI_STR_MEMBER(cgi_stall, "name", name)},
    {CGI_STR_MEMBER(cgi_stall, "thread", thread)},
    {CGI_STR_MEMBER(cgi_stall, "runtime", runtime)},
};

/* One stall of a saved report, into the next free entry of the list. */
void cgi_read_stall(cgi_json *j, cgi_stats_region *r, unsigned *n)
{
    cgi_stall tmp, *st = *n < CGI_STATS_MAX_STALLS ? &r->stall[*n] : &tmp;
    memset(st, 0, sizeof *st);
    st->waiters = -1;
    if (!cgi_lex_expect(j, '{')) return;
    do {
        char key[32];
        int64_t v = 0;
        if (!cgi_lex_str(j, key, sizeof key) || !cgi_lex_expect(j, ':')) return;
        uint64_t *u = NULL;
        if (cgi_read_str_member(j, key, st, cgi_stall_strs, CGI_COUNT(cgi_stall_strs)))
            continue;
        else if (strcmp(key, "python") == 0)
            cgi_read_python(j, st, 0);
        else if (strcmp(key, "tid") == 0) {
            if (cgi_lex_num(j, &v)) st->tid = (int32_t)v;
        } else if (strcmp(key, "waiters") == 0) {
            /* null, or a report from before waiters were counted: not known */
            if (!cgi_lex_word(j, "null") && cgi_lex_num(j, &v)) st->waiters = v >= 0 && v < INT32_MAX ? (int32_t)v : -1;
        } else if ((u = strcmp(key, "ns") == 0             ? &st->ns
                        : strcmp(key, "call_ns") == 0      ? &st->call_ns
                        : strcmp(key, "lock_wait_ns") == 0 ? &st->wait_ns
                        : strcmp(key, "entered_ns") == 0   ? &st->at_ns
                                                           : NULL)) {
            cgi_lex_count(j, key, u);
        } else
            cgi_lex_skip(j);
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
    if (!j->err && *n < CGI_STATS_MAX_STALLS) atomic_store(&st->valid, 1), (*n)++;
}

/* One entry point of a quirk's "serialize", appended to its sites. */
static void cgi_read_quirk_site(cgi_json *j, void *ctx)
{
    cgi_quirk_rec *q = ctx;
    char site[CGI_NAME_MAX];
    size_t len = strlen(q->sites);
    if (cgi_lex_str(j, site, sizeof site) && len + strlen(site) + 3 < sizeof q->sites)
        snprintf(q->sites + len, sizeof q->sites - len, "%s%s", len ? ", " : "", site);
}

static const cgi_str_member cgi_quirk_strs[] = {
    {CGI_STR_MEMBER(cgi_quirk_rec, "name", name)},
    {CGI_STR_MEMBER(cgi_quirk_rec, "api", api)},
    {CGI_STR_MEMBER(cgi_quirk_rec, "domain", domain)},
    {CGI_STR_MEMBER(cgi_quirk_rec, "source", source)},
    {CGI_STR_MEMBER(cgi_quirk_rec, "why", why)},
    {CGI_STR_MEMBER(cgi_quirk_rec, "not_applied", not_applied)},
    {CGI_STR_MEMBER(cgi_quirk_rec, "waits_behind", waiters)},
};
static const cgi_str_member cgi_matched_strs[] = {
    {CGI_STR_MEMBER(cgi_quirk_rec, "driver", driver)},
    {CGI_STR_MEMBER(cgi_quirk_rec, "version", version)},
    {CGI_STR_MEMBER(cgi_quirk_rec, "library", library)},
};

/* One quirk matched, of a saved report: {"name", "api", "applied",
 * "not_applied" (when not applied), "serialize": [...], "domain", "source",
 * "why", "matched": {"vendor", "driver", "version", "library"}}. A report
 * without "applied" (before it was written) lists only applied ones. One
 * past the CGI_STATS_MAX_QUIRKS kept is counted as dropped. */
void cgi_read_quirk(cgi_json *j, cgi_stats_region *r, unsigned *n)
{
    cgi_quirk_rec tmp, *q = *n < CGI_STATS_MAX_QUIRKS ? &r->quirk[*n] : &tmp;
    memset(q, 0, sizeof *q);
    q->applied = 1;
    if (!cgi_lex_expect(j, '{')) return;
    do {
        char key[32];
        if (!cgi_lex_str(j, key, sizeof key) || !cgi_lex_expect(j, ':')) return;
        if (cgi_read_str_member(j, key, q, cgi_quirk_strs, CGI_COUNT(cgi_quirk_strs)))
            continue;
        else if (strcmp(key, "applied") == 0)
            q->applied = cgi_read_bool(j);
        else if (strcmp(key, "serialize") == 0) {
            cgi_read_array(j, cgi_read_quirk_site, q);
        } else if (strcmp(key, "matched") == 0) {
            if (!cgi_lex_expect(j, '{')) return;
            do {
                char mk[16], vendor[16];
                if (!cgi_lex_str(j, mk, sizeof mk) || !cgi_lex_expect(j, ':')) return;
                if (strcmp(mk, "vendor") == 0) {
                    if (cgi_lex_str(j, vendor, sizeof vendor)) q->vendor = (uint32_t)strtoul(vendor, NULL, 0);
                } else if (!cgi_read_str_member(j, mk, q, cgi_matched_strs, CGI_COUNT(cgi_matched_strs)))
                    cgi_lex_skip(j);
            } while (!j->err && cgi_lex_lit(j, ','));
            cgi_lex_expect(j, '}');
        } else
            cgi_lex_skip(j);
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
    if (j->err) return;
    if (*n < CGI_STATS_MAX_QUIRKS)
        atomic_store(&q->valid, 1), (*n)++;
    else
        atomic_fetch_add(&r->h.quirks_dropped, 1);
}

static const cgi_str_member cgi_violation_strs[] = {
    {CGI_STR_MEMBER(cgi_violation, "api", api)},
    {CGI_STR_MEMBER(cgi_violation, "other_api", other_api)},
    {CGI_STR_MEMBER(cgi_violation, "entry_point", name)},
    {CGI_STR_MEMBER(cgi_violation, "other_entry_point", other)},
    {CGI_STR_MEMBER(cgi_violation, "set_entry_point", set_name)},
    {CGI_STR_MEMBER(cgi_violation, "access", access)},
    {CGI_STR_MEMBER(cgi_violation, "other_access", other_access)},
    {CGI_STR_MEMBER(cgi_violation, "param", param)},
    {CGI_STR_MEMBER(cgi_violation, "other_param", other_param)},
};

/* One thread-rule violation of a saved report, into the next free entry. */
void cgi_read_violation(cgi_json *j, cgi_stats_region *r, unsigned *n)
{
    cgi_violation tmp, *v = *n < CGI_STATS_MAX_VIOLATIONS ? &r->violation[*n] : &tmp;
    memset(v, 0, sizeof *v);
    v->kind = CGI_VIOLATION_OVERLAP;
    if (!cgi_lex_expect(j, '{')) return;
    do {
        char key[32], word[24];
        int64_t num = 0;
        if (!cgi_lex_str(j, key, sizeof key) || !cgi_lex_expect(j, ':')) return;
        if (strcmp(key, "rule") == 0) {
            if (cgi_lex_str(j, word, sizeof word) && strcmp(word, "sequence") == 0) v->kind = CGI_VIOLATION_SEQUENCE;
        } else if (strcmp(key, "handle") == 0) {
            if (cgi_lex_str(j, word, sizeof word)) v->handle = strtoull(word, NULL, 16);
        } else if (strcmp(key, "count") == 0) {
            uint64_t u;
            if (cgi_lex_count(j, key, &u)) atomic_store(&v->count, u);
        } else if (strcmp(key, "tid") == 0 || strcmp(key, "other_tid") == 0) {
            if (cgi_lex_num(j, &num)) *(key[0] == 't' ? &v->tid : &v->other_tid) = (int32_t)num;
        } else if (!cgi_read_str_member(j, key, v, cgi_violation_strs, CGI_COUNT(cgi_violation_strs)))
            cgi_lex_skip(j);
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
    if (!j->err && *n < CGI_STATS_MAX_VIOLATIONS)
        atomic_store(&v->valid, 1), (*n)++;
    else if (!j->err)
        atomic_fetch_add(&r->h.violations_dropped, atomic_load(&v->count));
}

void cgi_read_in_flight(cgi_json *j, cgi_stats_region *r, cgi_read_flight *names, unsigned *n)
{
    cgi_slot tmp, *slot = *n < CGI_STATS_MAX_SLOTS ? &r->slot[*n] : &tmp;
    cgi_read_flight tmpn, *fn = *n < CGI_STATS_MAX_SLOTS ? &names[*n] : &tmpn;
    memset(slot, 0, sizeof *slot);
    memset(fn, 0, sizeof *fn);
    char state[24] = "";
    if (!cgi_lex_expect(j, '{')) return;
    do {
        char key[32];
        int64_t v = 0;
        if (!cgi_lex_str(j, key, sizeof key) || !cgi_lex_expect(j, ':')) return;
        if (strcmp(key, "api") == 0)
            cgi_lex_str(j, fn->api, sizeof fn->api);
        else if (strcmp(key, "name") == 0)
            cgi_lex_str(j, fn->name, sizeof fn->name);
        else if (strcmp(key, "thread") == 0)
            cgi_lex_str(j, slot->thread, sizeof slot->thread);
        else if (strcmp(key, "state") == 0)
            cgi_lex_str(j, state, sizeof state);
        else if (strcmp(key, "tid") == 0) {
            if (cgi_lex_num(j, &v)) atomic_store(&slot->tid, (int32_t)v);
        } else if (strcmp(key, "entered_ns") == 0) {
            uint64_t u;
            if (cgi_lex_count(j, key, &u)) atomic_store(&slot->entered, u);
        } else
            cgi_lex_skip(j);
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
    atomic_store(&slot->waiting, strcmp(state, "waiting_for_lock") == 0);
    if (atomic_load(&slot->tid) <= 0) atomic_store(&slot->tid, 1); /* a slot in use has a thread */
    if (!j->err && *n < CGI_STATS_MAX_SLOTS) (*n)++;
}

/* Points each call in flight at the record of its site (one is made for a
 * site the report does not list). */
void cgi_link_in_flight(cgi_stats_region *r, const cgi_read_flight *names, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        uint32_t nrec = atomic_load(&r->h.nrecords), k = 0;
        while (k < nrec && !(strcmp(r->r[k].api, names[i].api) == 0 && strcmp(r->r[k].name, names[i].name) == 0))
            k++;
        if (k == nrec && nrec < CGI_STATS_MAX_RECORDS) {
            memset(&r->r[k], 0, sizeof r->r[k]);
            snprintf(r->r[k].api, sizeof r->r[k].api, "%s", names[i].api);
            snprintf(r->r[k].name, sizeof r->r[k].name, "%s", names[i].name);
            atomic_store(&r->h.nrecords, nrec + 1);
        }
        if (k < CGI_STATS_MAX_RECORDS) atomic_store(&r->slot[i].counters, &r->r[k].c);
    }
}

static const cgi_str_member cgi_hang_call_strs[] = {
    {CGI_STR_MEMBER(cgi_hang_call, "api", api)},
    {CGI_STR_MEMBER(cgi_hang_call, "name", name)},
    {CGI_STR_MEMBER(cgi_hang_call, "thread", thread)},
};

/* A hung call's "python": {"file", "line", "function"}, or null. */
static void cgi_read_hang_python(cgi_json *j, cgi_hang_call *e)
{
    int64_t v = 0;
    if (cgi_lex_word(j, "null") || !cgi_lex_expect(j, '{')) return;
    do {
        char pk[12], via[24];
        if (!cgi_lex_str(j, pk, sizeof pk) || !cgi_lex_expect(j, ':')) return;
        if (strcmp(pk, "file") == 0)
            cgi_lex_str(j, e->py_file, sizeof e->py_file);
        else if (strcmp(pk, "function") == 0 && !cgi_lex_word(j, "null"))
            cgi_lex_str(j, e->py_func, sizeof e->py_func);
        else if (strcmp(pk, "line") == 0 && cgi_lex_num(j, &v))
            e->py_line = (int32_t)v;
        else if (strcmp(pk, "read_via") == 0 && cgi_lex_str(j, via, sizeof via))
            e->py_via = strcmp(via, "/proc/self/mem") == 0 ? CGI_PY_VIA_PROC_MEM : CGI_PY_VIA_FIRST;
        else
            cgi_lex_skip(j);
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
}

/* A hung call's "args": {NAME: VALUE, ...}, or null; more than CG_WAIT_ARGS_MAX are read and dropped. */
static void cgi_read_hang_args(cgi_json *j, cgi_hang_call *e)
{
    e->nargs = 0;
    if (cgi_lex_word(j, "null") || !cgi_lex_expect(j, '{')) return;
    if (cgi_lex_lit(j, '}')) return;
    do {
        cgi_hang_arg tmp, *a = e->nargs < CG_WAIT_ARGS_MAX ? &e->arg[e->nargs] : &tmp;
        memset(a, 0, sizeof *a);
        if (!cgi_lex_str(j, a->name, sizeof a->name) || !cgi_lex_expect(j, ':') ||
            !cgi_lex_str(j, a->value, sizeof a->value))
            return;
        if (e->nargs < CG_WAIT_ARGS_MAX) e->nargs++;
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
}

/* One member of a hung call, as cgi_json_timing_and_hang wrote it (a late
 * call has the same ones, and its own). */
static void cgi_read_hang_member(cgi_json *j, const char *key, cgi_hang_call *e)
{
    char lock[CGI_DOMAIN_NAME_MAX];
    int64_t v = 0;
    uint64_t u;
    if (cgi_read_str_member(j, key, e, cgi_hang_call_strs, CGI_COUNT(cgi_hang_call_strs)))
        return;
    else if (strcmp(key, "tid") == 0 && cgi_lex_num(j, &v))
        e->tid = (int32_t)v;
    else if (strcmp(key, "age_ns") == 0 && cgi_lex_count(j, key, &u))
        e->age_ns = u;
    else if (strcmp(key, "runtime") == 0) {
        /* Before "holds_runtime" (reports of 0.x): a runtime named was held. */
        e->held = CGI_HELD_NO;
        if (!cgi_lex_word(j, "null") && cgi_lex_str(j, e->runtime, sizeof e->runtime)) e->held = CGI_HELD_YES;
    } else if (strcmp(key, "holds_runtime") == 0) {
        e->held = cgi_lex_word(j, "null") ? CGI_HELD_UNKNOWN : cgi_read_bool(j) ? CGI_HELD_YES : CGI_HELD_NO;
    } else if (strcmp(key, "waits_for_loader") == 0) {
        e->loader = cgi_read_bool(j);
    } else if (strcmp(key, "waits_for_lock") == 0) {
        if (!cgi_lex_word(j, "null") && cgi_lex_str(j, lock, sizeof lock)) {
            e->waiting = 1;
            if (strcmp(lock, "(a handle lock)") != 0) memcpy(e->domain, lock, sizeof e->domain);
        }
    } else if (strcmp(key, "lock_held_by") == 0) {
        if (!cgi_lex_word(j, "null") && cgi_lex_num(j, &v)) e->holder_tid = (int32_t)v;
    } else if (strcmp(key, "python") == 0) {
        cgi_read_hang_python(j, e);
    } else if (strcmp(key, "args") == 0) {
        cgi_read_hang_args(j, e);
    } else
        cgi_lex_skip(j);
}

static void cgi_read_hang_call_member(cgi_json *j, const char *key, void *ctx) { cgi_read_hang_member(j, key, ctx); }

/* One call of a hang report. */
static void cgi_read_hang_call(cgi_json *j, cgi_hang_call *e)
{
    memset(e, 0, sizeof *e);
    cgi_read_object(j, cgi_read_hang_call_member, e);
}

/* A thread seen waiting for the runtime: {"tid", "thread"}. */
static void cgi_read_waiter_member(cgi_json *j, const char *key, void *ctx)
{
    cgi_hang_waiter *w = ctx;
    int64_t v = 0;
    if (strcmp(key, "tid") == 0 && cgi_lex_num(j, &v))
        w->tid = (int32_t)v;
    else if (strcmp(key, "thread") == 0)
        cgi_lex_str(j, w->thread, sizeof w->thread);
    else
        cgi_lex_skip(j);
}

static void cgi_read_hang_waiter(cgi_json *j, void *ctx)
{
    cgi_hang_page *pg = ctx;
    cgi_hang_waiter tmp, *w = pg->nwaiters < CGI_HANG_MAX_WAITERS ? &pg->waiter[pg->nwaiters] : &tmp;
    memset(w, 0, sizeof *w);
    cgi_read_object(j, cgi_read_waiter_member, w);
    if (!j->err && pg->nwaiters < CGI_HANG_MAX_WAITERS) pg->nwaiters++;
}

static void cgi_read_hang_call_item(cgi_json *j, void *ctx)
{
    cgi_hang_page *pg = ctx;
    cgi_hang_call tmp;
    cgi_read_hang_call(j, pg->ncalls < CGI_HANG_MAX_CALLS ? &pg->call[pg->ncalls] : &tmp);
    if (!j->err && pg->ncalls < CGI_HANG_MAX_CALLS) pg->ncalls++;
}

/* "hang": null, or the last hang report of the process (docs/report.md,
 * "Hangs"); calls past CGI_HANG_MAX_CALLS are read and dropped, and
 * in_flight_count says how many there were. */
void cgi_read_hang(cgi_json *j, cgi_hang_page *pg)
{
    if (cgi_lex_word(j, "null")) return;
    if (!cgi_lex_expect(j, '{')) return;
    pg->asked = 1; /* a report without "asked" is older: its page was written because it was asked for */
    do {
        char key[24];
        uint64_t u;
        if (!cgi_lex_str(j, key, sizeof key) || !cgi_lex_expect(j, ':')) return;
        if (strcmp(key, "reports") == 0 && cgi_lex_count(j, key, &u))
            atomic_store(&pg->reports, u);
        else if (strcmp(key, "at_ns") == 0 && cgi_lex_count(j, key, &u))
            pg->at_ns = u;
        else if (strcmp(key, "hang_ms") == 0 && cgi_lex_count(j, key, &u))
            pg->hang_ns = u < UINT64_MAX / 1000000u ? u * 1000000u : UINT64_MAX;
        else if (strcmp(key, "seen_ns") == 0 && cgi_lex_count(j, key, &u))
            atomic_store(&pg->seen_ns, u);
        else if (strcmp(key, "over") == 0)
            pg->over = cgi_read_bool(j);
        else if (strcmp(key, "asked") == 0)
            pg->asked = cgi_read_bool(j);
        else if (strcmp(key, "in_flight_count") == 0 && cgi_lex_count(j, key, &u))
            pg->in_flight = u < CGI_STATS_MAX_SLOTS ? (uint32_t)u : CGI_STATS_MAX_SLOTS;
        else if (strcmp(key, "waiting_for_runtime") == 0)
            cgi_read_array(j, cgi_read_hang_waiter, pg);
        else if (strcmp(key, "calls") == 0) {
            cgi_read_array(j, cgi_read_hang_call_item, pg);
        } else
            cgi_lex_skip(j);
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
    if (pg->in_flight < pg->ncalls) pg->in_flight = pg->ncalls; /* an older report's: the calls it lists */
}

/* A late call: a hung call's members, its "duration_ms" and "entered_ns". */
static void cgi_read_late_member(cgi_json *j, const char *key, void *ctx)
{
    cgi_late_call *l = ctx;
    uint64_t u;
    if (strcmp(key, "duration_ms") == 0) {
        if (cgi_lex_count(j, key, &u)) l->ns = u < UINT64_MAX / 1000000u ? u * 1000000u : UINT64_MAX;
    } else if (strcmp(key, "entered_ns") == 0) {
        if (cgi_lex_count(j, key, &u)) l->ended_ns = u; /* the start, until the duration is added */
    } else
        cgi_read_hang_member(j, key, &l->call);
}

void cgi_read_late(cgi_json *j, cgi_late_page *lp, unsigned *n)
{
    cgi_late_call tmp, *l = *n < CGI_LATE_MAX ? &lp->call[*n] : &tmp;
    memset(l, 0, sizeof *l);
    cgi_read_object(j, cgi_read_late_member, l);
    if (j->err) return;
    l->ended_ns = l->ended_ns + l->ns < l->ended_ns ? UINT64_MAX : l->ended_ns + l->ns;
    atomic_fetch_add(&lp->count, 1);
    if (*n < CGI_LATE_MAX) atomic_store(&l->valid, 1), (*n)++;
}
