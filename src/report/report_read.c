/* Saved reports read back (the report schema, docs/report.md): each of a
 * JSON report's processes is turned into the same in-memory region a run
 * leaves, and written again, so a table printed from a saved file is the
 * table the run printed. cg_report_merge_files and cg_report_convert. The
 * report, its processes and their sites are read here; what a process
 * lists besides its sites, in report_lists.c. */
#define _GNU_SOURCE
#include "report.h"

#include "../common/errors.h"
#include "../common/launcher.h"
#include "../common/names.h"
#include "json_lex.h"
#include "outfile.h"
#include "report_lists.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One entry of a site's "results": {"name", "code", "calls", "kind"}. The
 * "other" entries (code null) are what errors and states leave unnamed:
 * nothing to keep. */
static void cgi_read_code(cgi_json *j, cgi_stats_record *rec, unsigned *n)
{
    char name[CGI_CODE_NAME_MAX] = "", kind[16] = "";
    int64_t code = 0;
    uint64_t calls = 0;
    int have_code = 0;
    if (!cgi_lex_expect(j, '{')) return;
    do {
        char key[16];
        if (!cgi_lex_str(j, key, sizeof key) || !cgi_lex_expect(j, ':')) return;
        if (strcmp(key, "name") == 0)
            cgi_lex_str(j, name, sizeof name);
        else if (strcmp(key, "code") == 0) {
            if (!cgi_lex_word(j, "null")) have_code = cgi_lex_num(j, &code);
        } else if (strcmp(key, "calls") == 0)
            cgi_lex_count(j, key, &calls);
        else if (strcmp(key, "kind") == 0)
            cgi_lex_str(j, kind, sizeof kind);
        else
            cgi_lex_skip(j);
    } while (!j->err && cgi_lex_lit(j, ','));
    cgi_lex_expect(j, '}');
    if (j->err || !have_code || *n >= CGI_STATS_MAX_CODES) return;
    cgi_code *k = &rec->code[(*n)++];
    k->code = (int32_t)code;
    memcpy(k->name, name, sizeof k->name);
    atomic_store(&k->count, calls);
    atomic_store(&k->set, strcmp(kind, "state") == 0 ? CGI_CODE_STATE : CGI_CODE_ERROR);
}

/* A site's counters, by key: each a whole number. */
static const struct {
    const char *key;
    size_t off; /* in cg_counters */
} cgi_site_counters[] = {
#define CGI_COUNTER_READ(name, summed, sharded) {#name, offsetof(cg_counters, name)},
    CGI_COUNTERS(CGI_COUNTER_READ)
#undef CGI_COUNTER_READ
};

typedef struct cgi_site_read {
    cgi_stats_record *rec;
    unsigned ncodes;
    int have_name, have_calls;
} cgi_site_read;

static void cgi_read_code_item(cgi_json *j, void *ctx)
{
    cgi_site_read *sr = ctx;
    cgi_read_code(j, sr->rec, &sr->ncodes);
}

/* A site's "policy": blocking, serialize, transition, scope, opened_at_call. */
static void cgi_read_policy_member(cgi_json *j, const char *key, void *ctx)
{
    cgi_stats_record *rec = ctx;
    char pv[CGI_DOMAIN_NAME_MAX];
    if (strcmp(key, "blocking") == 0) {
        rec->blocking = (uint8_t)cgi_read_bool(j);
    } else if (strcmp(key, "collective") == 0) {
        rec->collective = (uint8_t)cgi_read_bool(j);
    } else if (strcmp(key, "opened_at_call") == 0) {
        uint64_t u;
        if (!cgi_lex_word(j, "null") && cgi_lex_count(j, key, &u)) atomic_store(&rec->once_at, u ? u : CGI_ONCE_BEFORE);
    } else if (strcmp(key, "serialize") == 0) {
        if (!cgi_lex_word(j, "null")) cgi_lex_str(j, rec->domain, sizeof rec->domain);
    } else if (strcmp(key, "transition") == 0 || strcmp(key, "scope") == 0) {
        cgi_lex_str(j, pv, sizeof pv);
        int scope = key[0] == 's';
        int val = scope ? cgi_scope_value(pv) : cgi_transition_value(pv);
        if (val < 0) val = 0; /* a name this callguard does not know: the default */
        *(scope ? &rec->scope : &rec->transition) = (uint8_t)val;
    } else {
        cgi_lex_skip(j);
    }
}

static void cgi_read_site_member(cgi_json *j, const char *key, void *ctx)
{
    cgi_site_read *sr = ctx;
    cgi_stats_record *rec = sr->rec;
    uint64_t u;
    if (strcmp(key, "api") == 0) return (void)cgi_lex_str(j, rec->api, sizeof rec->api);
    if (strcmp(key, "name") == 0) return (void)(sr->have_name = cgi_lex_str(j, rec->name, sizeof rec->name));
    if (strcmp(key, "results") == 0) return cgi_read_array(j, cgi_read_code_item, sr);
    if (strcmp(key, "policy") == 0) return cgi_read_object(j, cgi_read_policy_member, rec);
    if (strcmp(key, "peak_inside") == 0 || strcmp(key, "peak_waiting") == 0) {
        /* null: not measured (peak_kind is derived from it) */
        cgi_peak *p = key[5] == 'i' ? &rec->c.inside : &rec->c.waiting;
        if (!cgi_lex_word(j, "null") && cgi_lex_count(j, key, &u))
            atomic_store(&p->peak, u > UINT32_MAX ? UINT32_MAX : (uint32_t)u);
        return;
    }
    for (size_t k = 0; k < sizeof cgi_site_counters / sizeof *cgi_site_counters; k++) {
        if (strcmp(key, cgi_site_counters[k].key) != 0) continue;
        if (cgi_lex_count(j, key, &u))
            atomic_store((_Atomic uint64_t *)((char *)&rec->c + cgi_site_counters[k].off), u);
        if (k == 0) sr->have_calls = 1;
        return;
    }
    cgi_lex_skip(j);
}

/* The region's next record, cleared (the region is reused: the last
 * process's record), or NULL when it has no more (j failed). Counted once
 * its reader filled it (cgi_record_add). */
static cgi_stats_record *cgi_record_next(cgi_json *j, cgi_stats_region *r)
{
    uint32_t n = atomic_load(&r->h.nrecords);
    if (n >= CGI_STATS_MAX_RECORDS) return cgi_lex_fail(j, "too many sites"), NULL;
    memset(&r->r[n], 0, sizeof r->r[n]);
    return &r->r[n];
}
static void cgi_record_add(cgi_stats_region *r, cgi_stats_record *rec)
{
    rec->used = 1;
    atomic_store(&r->h.nrecords, (uint32_t)(rec - r->r) + 1);
}

static void cgi_read_site(cgi_json *j, void *ctx)
{
    cgi_stats_region *r = ctx;
    cgi_site_read sr = {.rec = cgi_record_next(j, r)};
    if (!sr.rec) return;
    cgi_read_object(j, cgi_read_site_member, &sr);
    if (!j->err && (!sr.have_name || !sr.have_calls)) return cgi_lex_fail(j, "a site without \"name\" or \"calls\"");
    cgi_record_add(r, sr.rec);
}

/* "rank" or "local_rank": null, or a whole number up to CGI_RANK_MAX (a
 * launcher's rank is at most 9 digits: launcher.h). */
static void cgi_read_rank(cgi_json *j, const char *key, cgi_stats_header *h)
{
    uint64_t u;
    int local = key[0] == 'l';
    if (cgi_lex_word(j, "null") || !cgi_lex_count(j, key, &u)) return;
    if (u > CGI_RANK_MAX) {
        char m[96];
        snprintf(m, sizeof m, "\"%s\": expected a whole number from 0 to %d, or null", key, CGI_RANK_MAX);
        return cgi_lex_fail(j, m);
    }
    *(local ? &h->local_rank : &h->rank) = (uint32_t)u;
    h->rank_set |= local ? CGI_LOCAL_RANK_SET : CGI_RANK_SET;
}

/* What a process's members fill, and the counts of its lists so far. */
typedef struct cgi_proc_read {
    cgi_proc_view *v;
    cgi_stats_region *r;
    cgi_read_flight *flight;
    unsigned nstalls, nflight, nviol, nquirks, nlate;
    int have_pid, have_sites;
} cgi_proc_read;

static void cgi_read_exit_member(cgi_json *j, const char *key, void *ctx)
{
    cgi_proc_read *pr = ctx;
    char ev[16];
    int64_t num;
    if (strcmp(key, "state") == 0) {
        cgi_lex_str(j, ev, sizeof ev);
        pr->v->exit_state = strcmp(ev, "exited") == 0     ? CGI_PROC_EXITED
                            : strcmp(ev, "signaled") == 0 ? CGI_PROC_SIGNALED
                            : strcmp(ev, "execed") == 0   ? CGI_PROC_EXECED
                                                          : CGI_PROC_RUNNING;
    } else if ((strcmp(key, "status") == 0 || strcmp(key, "signal") == 0) && cgi_lex_num(j, &num)) {
        pr->v->exit_status = (int)num;
    } else if (strcmp(key, "signal_hook") == 0) {
        atomic_store(&pr->r->h.signal_hook, cgi_read_bool(j));
    } else {
        cgi_lex_skip(j); /* after a failed number too: the lexer's error stands */
    }
}

static void cgi_read_trace_member(cgi_json *j, const char *key, void *ctx)
{
    cgi_proc_view *v = ctx;
    if (strcmp(key, "events") == 0)
        cgi_lex_count(j, key, &v->trace_events);
    else if (strcmp(key, "dropped") == 0)
        cgi_lex_count(j, key, &v->trace_dropped);
    else
        cgi_lex_skip(j);
}

static void cgi_read_stall_item(cgi_json *j, void *ctx)
{
    cgi_proc_read *pr = ctx;
    cgi_read_stall(j, pr->r, &pr->nstalls);
}

static void cgi_read_in_flight_item(cgi_json *j, void *ctx)
{
    cgi_proc_read *pr = ctx;
    cgi_read_in_flight(j, pr->r, pr->flight, &pr->nflight);
}

static void cgi_read_late_item(cgi_json *j, void *ctx)
{
    cgi_proc_read *pr = ctx;
    cgi_read_late(j, &pr->r->late, &pr->nlate);
}

static void cgi_read_quirk_item(cgi_json *j, void *ctx)
{
    cgi_proc_read *pr = ctx;
    cgi_read_quirk(j, pr->r, &pr->nquirks);
}

/* One API of "quirks_probed", appended to the header's list. */
static void cgi_read_probed_item(cgi_json *j, void *ctx)
{
    cgi_stats_header *h = ctx;
    char api[CGI_API_NAME_MAX];
    if (!cgi_lex_str(j, api, sizeof api)) return;
    size_t len = strnlen(h->quirks_probed, sizeof h->quirks_probed);
    if (len + 1 + strlen(api) < sizeof h->quirks_probed && !strchr(api, ','))
        snprintf(h->quirks_probed + len, sizeof h->quirks_probed - len, "%s%s", len ? "," : "", api);
}

/* An entry point of "uncounted": a record of no calls that says so. */
static void cgi_read_uncounted_item(cgi_json *j, void *ctx)
{
    cgi_stats_region *r = ctx;
    cgi_stats_record *rec = cgi_record_next(j, r);
    if (!rec || !cgi_lex_str(j, rec->name, sizeof rec->name)) return;
    rec->uncounted = CGI_UNCOUNTED | CGI_UNCOUNTED_CALLED;
    cgi_record_add(r, rec);
}

static void cgi_read_violation_item(cgi_json *j, void *ctx)
{
    cgi_proc_read *pr = ctx;
    cgi_read_violation(j, pr->r, &pr->nviol);
}

/* The header's counts, by key: each a whole number, added (several
 * reports of one process are merged) or stored. */
static const struct {
    const char *key;
    size_t off; /* in cgi_stats_header */
    int add, u32;
} cgi_proc_counts[] = {
    {"thread_violations_dropped", offsetof(cgi_stats_header, violations_dropped), 1, 0},
    {"quirks_dropped", offsetof(cgi_stats_header, quirks_dropped), 1, 0},
    {"handles_untracked", offsetof(cgi_stats_header, handles_untracked), 0, 0},
    {"stalls_dropped", offsetof(cgi_stats_header, stalls_dropped), 0, 0},
    {"in_flight_unknown_threads", offsetof(cgi_stats_header, threads_unslotted), 0, 1},
};

static int cgi_read_proc_count(cgi_json *j, const char *key, cgi_stats_header *h)
{
    for (size_t k = 0; k < sizeof cgi_proc_counts / sizeof *cgi_proc_counts; k++) {
        if (strcmp(key, cgi_proc_counts[k].key) != 0) continue;
        uint64_t u;
        if (!cgi_lex_count(j, key, &u)) return 1;
        char *f = (char *)h + cgi_proc_counts[k].off;
        if (cgi_proc_counts[k].u32)
            atomic_store((_Atomic uint32_t *)f, (uint32_t)u);
        else if (cgi_proc_counts[k].add)
            atomic_fetch_add((_Atomic uint64_t *)f, u);
        else
            atomic_store((_Atomic uint64_t *)f, u);
        return 1;
    }
    return 0;
}

static void cgi_read_process_member(cgi_json *j, const char *key, void *ctx)
{
    cgi_proc_read *pr = ctx;
    cgi_stats_region *r = pr->r;
    int64_t num;
    char how[16];
    if (strcmp(key, "pid") == 0 && cgi_lex_num(j, &num))
        r->h.pid = (int32_t)num, pr->have_pid = 1;
    else if (strcmp(key, "ppid") == 0 && cgi_lex_num(j, &num))
        r->h.ppid = (int32_t)num;
    else if (strcmp(key, "command") == 0)
        cgi_lex_str(j, r->h.command, sizeof r->h.command);
    else if (strcmp(key, "host") == 0)
        cgi_lex_str(j, r->h.host, sizeof r->h.host);
    else if (strcmp(key, "rank") == 0 || strcmp(key, "local_rank") == 0)
        cgi_read_rank(j, key, &r->h);
    else if (strcmp(key, "rank_variable") == 0) {
        if (!cgi_lex_word(j, "null")) cgi_lex_str(j, r->h.rank_from, sizeof r->h.rank_from);
    } else if (strcmp(key, "exit") == 0)
        cgi_read_object(j, cgi_read_exit_member, pr);
    else if (strcmp(key, "trace") == 0)
        pr->v->have_trace = 1, cgi_read_object(j, cgi_read_trace_member, pr->v);
    else if (strcmp(key, "sites") == 0)
        pr->have_sites = 1, cgi_read_array(j, cgi_read_site, r);
    else if (strcmp(key, "uncounted") == 0)
        cgi_read_array(j, cgi_read_uncounted_item, r);
    else if (strcmp(key, "stalls") == 0)
        cgi_read_array(j, cgi_read_stall_item, pr);
    else if (strcmp(key, "in_flight") == 0)
        cgi_read_array(j, cgi_read_in_flight_item, pr);
    else if (strcmp(key, "quirks") == 0)
        cgi_read_array(j, cgi_read_quirk_item, pr);
    else if (strcmp(key, "quirks_probed") == 0)
        cgi_read_array(j, cgi_read_probed_item, &r->h);
    else if (strcmp(key, "thread_violations") == 0)
        cgi_read_array(j, cgi_read_violation_item, pr);
    else if (strcmp(key, "timing") == 0) {
        if (cgi_lex_str(j, how, sizeof how))
            atomic_store(&r->h.timing, strcmp(how, "exact") == 0 ? CGI_TIMING_EXACT : CGI_TIMING_SAMPLED);
    } else if (strcmp(key, "hang") == 0)
        cgi_read_hang(j, &r->hang);
    else if (strcmp(key, "late_calls") == 0)
        cgi_read_array(j, cgi_read_late_item, pr);
    else if (strcmp(key, "late_calls_dropped") == 0) {
        uint64_t u;
        if (cgi_lex_count(j, key, &u)) atomic_fetch_add(&r->late.count, u);
    } else if (!cgi_read_proc_count(j, key, &r->h))
        cgi_lex_skip(j);
}

static void cgi_read_process_into(cgi_json *j, cgi_proc_view *v, cgi_stats_region *r, cgi_read_flight *flight,
                                  unsigned *pnflight)
{
    cgi_proc_read pr = {.v = v, .r = r, .flight = flight};
    cgi_read_object(j, cgi_read_process_member, &pr);
    *pnflight = pr.nflight;
    if (!j->err) cgi_link_in_flight(r, flight, pr.nflight);
    if (!j->err && (!pr.have_pid || !pr.have_sites)) cgi_lex_fail(j, "a process without \"pid\" or \"sites\"");
}

/* One region, reused for each process of a saved report: a report of any
 * number of processes is read in the memory of one. */
typedef struct cgi_scratch {
    cgi_stats_region *r;
    cgi_read_flight *flight;
    unsigned nslots; /* slots the last process may have written */
} cgi_scratch;

static void cgi_read_process(cgi_json *j, cgi_proc_view *v, cgi_scratch *sc)
{
    cgi_stats_region *r = sc->r;
    /* What the last process wrote, cleared (records are cleared as they are read). */
    memset(&r->h, 0, sizeof r->h);
    memset(r->stall, 0, sizeof r->stall);
    memset(r->violation, 0, sizeof r->violation);
    memset(r->quirk, 0, sizeof r->quirk);
    memset(&r->hang, 0, offsetof(cgi_hang_page, call)); /* its calls are cleared as they are read */
    memset(&r->late, 0, sizeof r->late);
    memset(r->slot, 0, (sc->nslots < CGI_STATS_MAX_SLOTS ? sc->nslots + 1 : CGI_STATS_MAX_SLOTS) * sizeof r->slot[0]);
    sc->nslots = CGI_STATS_MAX_SLOTS; /* until the process is read: an error may leave any number written */
    *v = (cgi_proc_view){.region = r, .have_exit = 1};
    atomic_store(&r->h.tick_mult, 1ull << 32); /* entered_ns is in ns already */
    r->h.base = (uint64_t)(uintptr_t)r;
    unsigned nflight = CGI_STATS_MAX_SLOTS;
    cgi_read_process_into(j, v, r, sc->flight, &nflight);
    sc->nslots = nflight;
}

/* The largest saved report read (a report is about 1 KB a process). */
#define CGI_REPORT_MAX_FILE (256 << 20)

/* The bytes of one saved report (a regular file, not too large), malloc'd. */
static int cgi_report_load(const char *json_path, char **ptext, size_t *plen)
{
    *ptext = NULL, *plen = 0;
    if (!json_path) return cgi_fail(CG_EINVAL, "report file name is NULL");
    /* O_NONBLOCK: a FIFO opens without waiting for a writer, and is then refused. */
    int fd = open(json_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0) close(fd);
        return cgi_fail(CG_EIO, "cannot read %s: %s", json_path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return cgi_fail(CG_EIO, "cannot read %s: %s, expected a report file", json_path,
                        S_ISDIR(st.st_mode)                          ? "a directory"
                        : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                        : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                     : "not a regular file");
    }
    if (st.st_size > CGI_REPORT_MAX_FILE) {
        close(fd);
        return cgi_fail(CG_EFORMAT, "%s: %lld bytes, more than a report of %d MiB this callguard reads", json_path,
                        (long long)st.st_size, CGI_REPORT_MAX_FILE >> 20);
    }
    if (st.st_size == 0) {
        close(fd);
        return cgi_fail(CG_EFORMAT, "%s is empty: not a callguard report", json_path);
    }
    char *text = malloc((size_t)st.st_size);
    size_t got = text ? cgi_pread_full(fd, text, (size_t)st.st_size, 0) : 0;
    close(fd);
    if (!text) return cgi_fail(CG_ENOMEM, "cannot read %s: out of memory", json_path);
    if (got != (size_t)st.st_size) {
        free(text);
        return cgi_fail(CG_EIO, "cannot read %s: it changed size while read", json_path);
    }
    *ptext = text, *plen = got;
    return CG_OK;
}

/* "not_counted" (internal.h, cgi_not_counted); its names past the first few are skipped. */
static void cgi_read_not_counted_name(cgi_json *j, void *ctx)
{
    cgi_not_counted *nc = ctx;
    if (nc->nnames < CGI_NOT_COUNTED_NAMES)
        cgi_lex_str(j, nc->names[nc->nnames++], CGI_NAME_MAX);
    else
        cgi_lex_skip(j);
}
static void cgi_read_not_counted_member(cgi_json *j, const char *key, void *ctx)
{
    cgi_not_counted *nc = ctx;
    if (strcmp(key, "processes") == 0)
        cgi_lex_count(j, key, &nc->processes);
    else if (strcmp(key, "entry_points") == 0)
        cgi_lex_count(j, key, &nc->entry_points);
    else if (strcmp(key, "such_as") == 0)
        cgi_read_array(j, cgi_read_not_counted_name, nc);
    else
        cgi_lex_skip(j);
}

/* Reads one saved report; each process goes to w as it is read (w NULL:
 * the report is only checked), and its processes_without_statistics is
 * added to *lost. */
static int cgi_report_parse(const char *json_path, const char *text, size_t len, cgi_scratch *sc, cgi_report_writer *w,
                            size_t *lost)
{
    cgi_json j = {.s = text, .end = text + len};
    char schema[64] = "";
    int64_t version = -1;
    int have_processes = 0, closed = 0;
    if (!j.err && !cgi_lex_lit(&j, '{')) cgi_lex_fail(&j, "does not start with '{'");
    while (!j.err) {
        char key[32];
        if (!cgi_lex_str(&j, key, sizeof key) || !cgi_lex_expect(&j, ':')) break;
        if (strcmp(key, "schema") == 0)
            cgi_lex_str(&j, schema, sizeof schema);
        else if (strcmp(key, "version") == 0)
            cgi_lex_num(&j, &version);
        else if (strcmp(key, "processes_without_statistics") == 0) {
            uint64_t n = 0;
            if (cgi_lex_count(&j, key, &n)) *lost += (size_t)n;
        } else if (strcmp(key, "processes") == 0) {
            have_processes = 1;
            if (strcmp(schema, CGI_REPORT_SCHEMA) != 0 || version != 1) break; /* checked below */
            if (!cgi_lex_expect(&j, '[')) break;
            if (!cgi_lex_lit(&j, ']')) {
                do {
                    cgi_proc_view v;
                    cgi_read_process(&j, &v, sc);
                    if (!j.err && w) cgi_report_add(w, &v);
                } while (!j.err && cgi_lex_lit(&j, ','));
                cgi_lex_expect(&j, ']');
            }
        } else if (strcmp(key, "not_counted") == 0) {
            cgi_not_counted nc = {0};
            cgi_read_object(&j, cgi_read_not_counted_member, &nc);
            if (!j.err && w) cgi_report_not_counted(w, &nc);
        } else if (strcmp(key, "stuck") == 0) {
            /* The job's view when it was stuck: kept as it was written (the first report's). */
            cgi_lex_ws(&j);
            const char *at = j.s;
            cgi_lex_skip(&j);
            if (!j.err && w) cgi_report_keep_stuck(w, at, (size_t)(j.s - at));
        } else
            cgi_lex_skip(&j);
        if (!cgi_lex_lit(&j, ',')) {
            closed = cgi_lex_expect(&j, '}');
            break;
        }
    }
    /* Reports run together into one file (`cat a.json b.json`): reading
     * the first alone would drop the others' processes without a word. */
    if (closed && !j.err && (cgi_lex_ws(&j), j.s < j.end))
        cgi_lex_fail(&j, "more text after the end of the report (one report a file: give several reports as "
                         "several files)");
    if (strcmp(schema, CGI_REPORT_SCHEMA) != 0 && (!j.err || !schema[0]))
        return cgi_fail(CG_EFORMAT, "%s is not a callguard report (no \"schema\": \"callguard-report\")", json_path);
    if (version != 1 && !j.err)
        return cgi_fail(CG_EFORMAT, "%s is a callguard report of version %lld; this callguard reads version 1",
                        json_path, (long long)version);
    if (j.err)
        return cgi_fail(CG_EFORMAT, "%s: malformed or truncated report at byte %ld: %s", json_path, (long)(j.s - text),
                        j.msg);
    if (!have_processes) return cgi_fail(CG_EFORMAT, "%s: report without \"processes\"", json_path);
    return CG_OK;
}

/* Every file is read and checked first, then written from: a bad file
 * anywhere writes no report. Memory: the files' bytes, one region, and the
 * combined table (docs/report.md states the bound). */
int cg_report_merge_files(const char *const *json_paths, size_t npaths, const char *path, cg_report_format format)
{
    if (!json_paths || !npaths) return cgi_fail(CG_EINVAL, "no report file given");
    char **text = calloc(npaths, sizeof *text);
    size_t *len = calloc(npaths, sizeof *len);
    cgi_scratch sc = {.r = calloc(1, sizeof *sc.r), .flight = calloc(CGI_STATS_MAX_SLOTS, sizeof *sc.flight)};
    int rc = text && len && sc.r && sc.flight ? CG_OK : cgi_fail(CG_ENOMEM, "out of memory");
    size_t lost = 0, checked = 0;
    for (size_t i = 0; i < npaths && rc == CG_OK; i++) {
        rc = cgi_report_load(json_paths[i], &text[i], &len[i]);
        if (rc == CG_OK) rc = cgi_report_parse(json_paths[i], text[i], len[i], &sc, NULL, &checked);
    }
    cgi_report_writer *w = NULL;
    if (rc == CG_OK) rc = cgi_report_begin(path, format, &w);
    if (w) cgi_report_sources(w, json_paths, npaths); /* the advice's command names them */
    for (size_t i = 0; i < npaths && rc == CG_OK; i++)
        rc = cgi_report_parse(json_paths[i], text[i], len[i], &sc, w, &lost);
    if (w) {
        /* The processes the saved runs lost are said again, summed. */
        int end = cgi_report_end(w, lost);
        if (rc == CG_OK) rc = end;
    }
    for (size_t i = 0; text && i < npaths; i++)
        free(text[i]);
    free(text), free(len), free(sc.r), free(sc.flight);
    return rc;
}

int cg_report_convert(const char *json_path, const char *path, cg_report_format format)
{
    return cg_report_merge_files(&json_path, 1, path, format);
}
