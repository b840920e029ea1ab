/* The combined table of a report: each process's entry points folded,
 * as it is added, into one row per entry point (an arena of names, and an
 * open-addressing index of rows and of host names); a process with a rank
 * also into the view across ranks (report_ranks.c). */
#define _GNU_SOURCE
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Room for len bytes in the arena; NULL: out of memory. */
static char *cgi_arena_take(cgi_report_writer *w, size_t len)
{
    cgi_arena_block *b = w->arena;
    if (!b || b->used + len > CGI_ARENA_BLOCK) {
        b = malloc(sizeof *b + CGI_ARENA_BLOCK);
        if (!b) return NULL;
        b->next = w->arena, b->used = 0, w->arena = b;
    }
    char *out = b->bytes + b->used;
    b->used += len;
    return out;
}

static const char *cgi_arena_str(cgi_report_writer *w, const char *s, size_t cap)
{
    size_t len = strnlen(s, cap);
    char *out = cgi_arena_take(w, len + 1);
    if (out) memcpy(out, s, len), out[len] = '\0';
    return out;
}

cgi_row *cgi_row_at(const cgi_report_writer *w, size_t i) { return &w->rowblk[i / CGI_ROW_BLOCK][i % CGI_ROW_BLOCK]; }

/* FNV-1a of a, then b (NULL: none); each at most its field's size. */
static uint64_t cgi_hash(const char *a, size_t acap, const char *b, size_t bcap)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < acap && a[i]; i++)
        h = (h ^ (unsigned char)a[i]) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;
    for (size_t i = 0; b && i < bcap && b[i]; i++)
        h = (h ^ (unsigned char)b[i]) * 1099511628211ull;
    return h;
}

static uint64_t cgi_row_hash(const cgi_report_writer *w, size_t i)
{
    const cgi_row *row = cgi_row_at(w, i);
    return cgi_hash(row->api, CGI_API_NAME_MAX, CGI_ROW_NAME(row), CGI_NAME_MAX);
}

static uint64_t cgi_host_hash(const cgi_report_writer *w, size_t i) { return cgi_hash(w->hosts[i], 64, NULL, 0); }

/* Room for entry n (the index stays at most half full); 0: out of memory. */
static int cgi_index_room(cgi_index *x, size_t n, const cgi_report_writer *w,
                          uint64_t (*hash_of)(const cgi_report_writer *, size_t))
{
    if (n >= UINT32_MAX - 1) return 0;
    if ((n + 1) * 2 <= x->cap) return 1;
    size_t cap = x->cap ? x->cap * 2 : 1024;
    uint32_t *ix = calloc(cap, sizeof *ix);
    if (!ix) return 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = hash_of(w, i) & (cap - 1);
        while (ix[k])
            k = (k + 1) & (cap - 1);
        ix[k] = (uint32_t)i + 1;
    }
    free(x->ix);
    x->ix = ix, x->cap = cap;
    return 1;
}

static void cgi_index_put(cgi_index *x, uint64_t h, size_t i)
{
    size_t k = h & (x->cap - 1);
    while (x->ix[k])
        k = (k + 1) & (x->cap - 1);
    x->ix[k] = (uint32_t)i + 1;
}

/* Grows an array of n elements of size sz to hold one more; 0: out of memory. */
static int cgi_array_room(void *pv, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap) return 1;
    size_t ncap = *cap ? *cap * 2 : 256;
    void *nv = realloc(*(void **)pv, ncap * sz);
    if (!nv) return 0;
    *(void **)pv = nv, *cap = ncap;
    return 1;
}

/* The row of rec's entry point, made when new, and its index; NULL: out of memory. */
static cgi_row *cgi_row_of(cgi_report_writer *w, const cgi_stats_record *rec, size_t *ix)
{
    uint64_t h = cgi_hash(rec->api, sizeof rec->api, rec->name, sizeof rec->name);
    for (size_t k = h & (w->rowix.cap - 1); w->rowix.cap && w->rowix.ix[k]; k = (k + 1) & (w->rowix.cap - 1)) {
        cgi_row *row = cgi_row_at(w, w->rowix.ix[k] - 1);
        if (strncmp(row->api, rec->api, sizeof rec->api) == 0 &&
            strncmp(CGI_ROW_NAME(row), rec->name, sizeof rec->name) == 0)
            return *ix = w->rowix.ix[k] - 1, row;
    }
    if (!cgi_index_room(&w->rowix, w->nrow, w, cgi_row_hash)) return NULL;
    if (w->nrow == w->nblk * CGI_ROW_BLOCK) {
        if (!cgi_array_room(&w->rowblk, &w->blkcap, w->nblk, sizeof *w->rowblk) ||
            !(w->rowblk[w->nblk] = malloc(CGI_ROW_BLOCK * sizeof(cgi_row))))
            return NULL;
        w->nblk++;
    }
    size_t la = strnlen(rec->api, sizeof rec->api), ln = strnlen(rec->name, sizeof rec->name),
           ld = strnlen(rec->domain, sizeof rec->domain);
    char *names = cgi_arena_take(w, la + ln + ld + 3);
    if (!names) return NULL;
    memcpy(names, rec->api, la), names[la] = '\0';
    memcpy(names + la + 1, rec->name, ln), names[la + 1 + ln] = '\0';
    memcpy(names + la + ln + 2, rec->domain, ld), names[la + ln + 2 + ld] = '\0';
    cgi_row *row = cgi_row_at(w, w->nrow);
    *row = (cgi_row){.api = names,
                     .name_at = (uint8_t)(la + 1),
                     .domain_at = (uint8_t)(la + ln + 2),
                     .transition = rec->transition,
                     .scope = rec->scope,
                     .blocking = rec->blocking,
                     .once_at = cgi_ld(&rec->once_at)};
    *ix = w->nrow;
    cgi_index_put(&w->rowix, h, w->nrow++);
    if ((int)la > w->apiw) w->apiw = (int)la;
    return row;
}

/* Counts host among the distinct ones; its one copy, or NULL: out of memory. */
static const char *cgi_note_host(cgi_report_writer *w, const char *host, size_t cap)
{
    uint64_t h = cgi_hash(host, cap, NULL, 0);
    for (size_t k = h & (w->hostix.cap - 1); w->hostix.cap && w->hostix.ix[k]; k = (k + 1) & (w->hostix.cap - 1))
        if (strncmp(w->hosts[w->hostix.ix[k] - 1], host, cap) == 0) return w->hosts[w->hostix.ix[k] - 1];
    if (!cgi_index_room(&w->hostix, w->nhosts, w, cgi_host_hash) ||
        !cgi_array_room(&w->hosts, &w->hostcap, w->nhosts, sizeof *w->hosts))
        return NULL;
    if (!(w->hosts[w->nhosts] = cgi_arena_str(w, host, cap))) return NULL;
    cgi_index_put(&w->hostix, h, w->nhosts++);
    return w->hosts[w->nhosts - 1];
}

/* The process's stalls into the view across ranks, at their rows. */
static void cgi_fold_stalls(cgi_report_writer *w, const cgi_stats_region *r, uint32_t rank)
{
    for (unsigned i = 0; i < CGI_STATS_MAX_STALLS && !w->oom; i++) {
        const cgi_stall *st = &r->stall[i];
        if (!atomic_load(&st->valid)) continue;
        for (uint32_t k = 0; k < cgi_nrec(r); k++) {
            const cgi_stats_record *rec = &r->r[k];
            size_t ix;
            if (strncmp(rec->api, st->api, sizeof st->api) != 0 || strncmp(rec->name, st->name, sizeof st->name) != 0 ||
                cgi_ctr_calls(&rec->c) == 0)
                continue;
            if (!cgi_row_of(w, rec, &ix) || cgi_ranks_stall(w->ranks, rank, ix, st->ns) != 0) w->oom = 1;
            break;
        }
    }
}

/* Notes the quirks the process matched, applied or not, and the APIs it
 * probed for quirks (a few per process): what the advice says of them. */
static void cgi_note_quirks(cgi_report_writer *w, const cgi_stats_region *r)
{
    for (unsigned i = 0; i < CGI_STATS_MAX_QUIRKS && !w->oom; i++) {
        const cgi_quirk_rec *q = &r->quirk[i];
        if (!atomic_load(&q->valid)) continue;
        size_t k = 0;
        while (k < w->nquirks && strncmp(w->quirks[k].name, q->name, sizeof q->name) != 0)
            k++;
        if (k == w->nquirks) {
            const char *name = cgi_array_room(&w->quirks, &w->quirkcap, w->nquirks, sizeof *w->quirks)
                                   ? cgi_arena_str(w, q->name, sizeof q->name)
                                   : NULL;
            if (!name) {
                w->oom = 1;
                break;
            }
            w->quirks[w->nquirks++] = (cgi_quirk_seen){name, 0};
        }
        w->quirks[k].applied |= q->applied != 0;
    }
    if (atomic_load(&r->h.quirks_dropped)) w->quirks_unsure = 1;
    const char *api = r->h.quirks_probed, *end = api + strnlen(api, sizeof r->h.quirks_probed);
    while (api < end && !w->oom) {
        size_t len = strcspn(api, ","), k = 0;
        if (len > (size_t)(end - api)) len = (size_t)(end - api);
        while (k < w->nprobed && !(strlen(w->probed[k]) == len && strncmp(w->probed[k], api, len) == 0))
            k++;
        if (k == w->nprobed && len) {
            const char *copy = cgi_array_room(&w->probed, &w->probedcap, w->nprobed, sizeof *w->probed)
                                   ? cgi_arena_str(w, api, len)
                                   : NULL;
            if (!copy)
                w->oom = 1;
            else
                w->probed[w->nprobed++] = copy;
        }
        api += len + 1;
    }
}

/* A process's entry points into the combined table. */
void cgi_fold(cgi_report_writer *w, const cgi_stats_region *r)
{
    cgi_note_quirks(w, r);
    const char *host = cgi_note_host(w, r->h.host, sizeof r->h.host);
    uint32_t rank = host ? cgi_ranks_process(w->ranks, &r->h, host) : CGI_RANKS_OOM;
    if (rank == CGI_RANKS_OOM) w->oom = 1;
    for (uint32_t k = 0; k < cgi_nrec(r) && !w->oom; k++) {
        const cgi_stats_record *rec = &r->r[k];
        if (cgi_ctr_calls(&rec->c) == 0) continue;
        size_t ix;
        cgi_row *row = cgi_row_of(w, rec, &ix);
        /* A row of one communicator ("NAME@ID") is compared among the ranks that have it. */
        if (!row || (rank != CGI_RANKS_NONE &&
                     (cgi_ranks_site(w->ranks, rank, ix, &rec->c) != 0 ||
                      (memchr(rec->name, '@', sizeof rec->name) && cgi_ranks_members_only(w->ranks, ix) != 0)))) {
            w->oom = 1;
            break;
        }
        if (strncmp(CGI_ROW_DOMAIN(row), rec->domain, sizeof rec->domain) != 0 || row->transition != rec->transition ||
            row->scope != rec->scope || row->blocking != rec->blocking)
            row->mixed = 1;
        row->collective |= rec->collective != 0;
        uint64_t at = cgi_ld(&rec->once_at);
        /* Open in every process: the latest opening (before the first call only where all say so). */
        if (!row->once_at || !at)
            row->once_at = 0;
        else if (row->once_at == CGI_ONCE_BEFORE || (at != CGI_ONCE_BEFORE && at > row->once_at))
            row->once_at = at;
        cgi_add(&row->t, &rec->c);
        if ((cgi_ctr_errors(&rec->c) || cgi_ctr_states(&rec->c)) && !row->codes &&
            w->ncodelists < CGI_ROWS_WITH_CODES) {
            /* Bounded: the first CGI_ROWS_WITH_CODES rows with such results name them. */
            char *mem = cgi_arena_take(w, sizeof *row->codes + 8);
            if (!mem) {
                w->oom = 1;
                break;
            }
            row->codes = (cgi_code_list *)(((uintptr_t)mem + 7) & ~(uintptr_t)7);
            memset(row->codes, 0, sizeof *row->codes);
            w->ncodelists++;
        }
        if (row->codes) cgi_codes_add(row->codes, rec, CGI_CODES_MERGED);
        uint64_t m = cgi_ld(&rec->c.max_ns);
        if (m > row->max_ns) row->max_ns = m;
        /* Peaks of several processes: the most any one had (they are not
         * threads of one process, so they do not add up). */
        if (cgi_peak_of(&rec->c.inside) > row->peak_inside) row->peak_inside = cgi_peak_of(&rec->c.inside);
        if (cgi_peak_of(&rec->c.waiting) > row->peak_waiting) row->peak_waiting = cgi_peak_of(&rec->c.waiting);
    }
    if (rank != CGI_RANKS_NONE && rank != CGI_RANKS_OOM) cgi_fold_stalls(w, r, rank);
}
