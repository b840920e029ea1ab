/* cg_nccl_hand.c: the NCCL layer's hand-written wrappers (wrapper = hand in apis/nccl.ini), #included at the end
 * of the generated cg_nccl.c, so it sees the layer's own names (include/callguard/layer.h). Not compiled alone.
 *
 * Why: a job's ranks are compared per communicator (docs/nccl.md). A collective's site counts every call of the
 * process; these wrappers also count it in a row of the communicator's own, "ncclAllReduce@ID" (cg_site_row),
 * which a job's report compares across the ranks that have it. ID names the communicator alike on every rank:
 *  - made by ncclCommInitRank(Config): a hash of its ncclUniqueId, the 128 bytes every rank passes;
 *  - by ncclCommInitRankScalable: a hash of its nId unique ids;
 *  - by ncclCommSplit: a hash of its parent's ID, the color, and how many splits of that parent came before
 *    (every rank of a parent splits it in the same order, NCCL's rule); ncclCommShrink likewise.
 * A rank/size pair would not do: two communicators of a job can have one size, and a process one rank in both.
 * A communicator made otherwise (ncclCommInitAll's, a grown one) has no ID: its calls count in the site's row
 * alone. Each wrapper makes the guarded call first (cgl_guarded_NAME: the generated paths), then looks the
 * communicator up: a collective with a short probe and no lock once its row is made (the first call of a kind
 * on a communicator, and the calls that make, split or end one, take a mutex). */
#include <pthread.h>
#include <stdio.h>

/* The collectives and communicator calls counted per communicator: a row each, cached per communicator. The
 * collectives first: their rows share the entry's first cache line with its address (cgl_comm). */
enum {
    CGL_K_ALLREDUCE,
    CGL_K_BROADCAST,
    CGL_K_REDUCE,
    CGL_K_ALLGATHER,
    CGL_K_REDUCESCATTER,
    CGL_K_ALLTOALL,
    CGL_K_BCAST,
    CGL_K_GATHER,
    CGL_K_SCATTER,
    CGL_K_INIT,
    CGL_K_SPLIT,
    CGL_K_SHRINK,
    CGL_K_FINALIZE,
    CGL_K_DESTROY,
    CGL_NK
};
static const unsigned cgl_k_site[CGL_NK] = {
    [CGL_K_INIT] = CGL_ncclCommInitRank,
    [CGL_K_SPLIT] = CGL_ncclCommSplit,
    [CGL_K_SHRINK] = CGL_ncclCommShrink,
    [CGL_K_FINALIZE] = CGL_ncclCommFinalize,
    [CGL_K_DESTROY] = CGL_ncclCommDestroy,
    [CGL_K_ALLREDUCE] = CGL_ncclAllReduce,
    [CGL_K_BROADCAST] = CGL_ncclBroadcast,
    [CGL_K_BCAST] = CGL_ncclBcast,
    [CGL_K_REDUCE] = CGL_ncclReduce,
    [CGL_K_ALLGATHER] = CGL_ncclAllGather,
    [CGL_K_REDUCESCATTER] = CGL_ncclReduceScatter,
    [CGL_K_ALLTOALL] = CGL_ncclAlltoAll,
    [CGL_K_GATHER] = CGL_ncclGather,
    [CGL_K_SCATTER] = CGL_ncclScatter,
};

/* Communicators with an ID, by address (open addressing; a destroyed one leaves a tombstone). Past
 * CGL_NCOMMS live ones, a new one gets no ID. */
#define CGL_NCOMMS 1024
/* An entry is 64-byte aligned and a collective reads its first line alone (its address and the row of the
 * first 7 kinds): with cold caches, one line missed (bench/bench_cold.sh). */
typedef struct cgl_comm {
    _Alignas(64) _Atomic(ncclComm_t) comm;   /* NULL: free; CGL_GONE: destroyed; set last, with release (cgl_add) */
    struct cg_counters *_Atomic row[CGL_NK]; /* made on first use, under the lock; read without it */
    uint64_t id;
    uint32_t splits, shrinks; /* of this communicator so far */
} cgl_comm;
_Static_assert(offsetof(cgl_comm, row) + 7 * sizeof(void *) == 64, "the collectives' rows on the entry's first line");
#define CGL_GONE ((ncclComm_t)(uintptr_t)1)
static cgl_comm cgl_comms[CGL_NCOMMS];
static pthread_mutex_t cgl_comms_lock = PTHREAD_MUTEX_INITIALIZER;

/* A forked child has one thread: a lock another thread held at the fork stays held there (docs/design.md, Fork). */
static void cgl_comms_after_fork(void) { pthread_mutex_init(&cgl_comms_lock, NULL); }
__attribute__((constructor)) static void cgl_comms_init(void) { pthread_atfork(NULL, NULL, cgl_comms_after_fork); }

static uint64_t cgl_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}
#define CGL_FNV0 14695981039346656037ull

static size_t cgl_slot0(ncclComm_t c) { return (size_t)(((uintptr_t)c >> 4) * 2654435761u) & (CGL_NCOMMS - 1); }

/* The entry of c, or NULL. With the lock, or without it for a communicator in use (its entry was
 * published before the call that made it returned; a program that uses a communicator while destroying
 * it gets no row counted, or its old one). */
static cgl_comm *cgl_find(ncclComm_t c)
{
    for (size_t i = cgl_slot0(c), n = 0; n < CGL_NCOMMS; i = (i + 1) & (CGL_NCOMMS - 1), n++) {
        ncclComm_t at = atomic_load_explicit(&cgl_comms[i].comm, memory_order_acquire);
        if (at == c) return &cgl_comms[i];
        if (!at) break;
    }
    return NULL;
}

/* c gets the ID id (a communicator address NCCL hands out again after a destroy gets a fresh entry). */
static void cgl_add(ncclComm_t c, uint64_t id)
{
    if (!c) return;
    pthread_mutex_lock(&cgl_comms_lock);
    cgl_comm *e = cgl_find(c);
    for (size_t i = cgl_slot0(c), n = 0; !e && n < CGL_NCOMMS; i = (i + 1) & (CGL_NCOMMS - 1), n++) {
        ncclComm_t at = atomic_load_explicit(&cgl_comms[i].comm, memory_order_relaxed);
        if (!at || at == CGL_GONE) e = &cgl_comms[i];
    }
    if (e) {
        atomic_store_explicit(&e->comm, CGL_GONE, memory_order_relaxed);
        e->id = id, e->splits = 0, e->shrinks = 0;
        for (unsigned k = 0; k < CGL_NK; k++)
            atomic_store_explicit(&e->row[k], NULL, memory_order_relaxed);
        atomic_store_explicit(&e->comm, c, memory_order_release);
    }
    pthread_mutex_unlock(&cgl_comms_lock);
}

/* Counts one call of kind k on c in c's row; with split/shrink, also returns the ID its next child gets. */
static void cgl_count(ncclComm_t c, unsigned k, ncclResult_t r, int child_color, uint64_t *child)
{
    if (!c) return;
    pthread_mutex_lock(&cgl_comms_lock);
    cgl_comm *e = cgl_find(c);
    struct cg_counters *row = NULL;
    if (e) {
        row = atomic_load_explicit(&e->row[k], memory_order_relaxed);
        if (!row) {
            char tag[16];
            snprintf(tag, sizeof tag, "%012llx", (unsigned long long)(e->id & 0xffffffffffffull));
            row = cg_site_row(&cgl_sites[cgl_k_site[k]], tag);
            atomic_store_explicit(&e->row[k], row, memory_order_release);
        }
        if (child) {
            uint32_t nth = k == CGL_K_SPLIT ? e->splits++ : e->shrinks++;
            uint64_t h = cgl_fnv(CGL_FNV0, &e->id, sizeof e->id);
            h = cgl_fnv(h, &k, sizeof k), h = cgl_fnv(h, &nth, sizeof nth);
            *child = cgl_fnv(h, &child_color, sizeof child_color);
        }
    }
    pthread_mutex_unlock(&cgl_comms_lock);
    cg_row_count(row, r != ncclSuccess && r != ncclInProgress);
}

/* c is gone after k (destroy, abort): its entry becomes a tombstone. */
static void cgl_drop(ncclComm_t c)
{
    pthread_mutex_lock(&cgl_comms_lock);
    cgl_comm *e = c ? cgl_find(c) : NULL;
    if (e) atomic_store_explicit(&e->comm, CGL_GONE, memory_order_release);
    pthread_mutex_unlock(&cgl_comms_lock);
}

static int cgl_made(ncclResult_t r) { return r == ncclSuccess || r == ncclInProgress; }

/* ---- communicators made, split, ended ---- */
CG_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank)
{
    ncclResult_t r = cgl_guarded_ncclCommInitRank(comm, nranks, commId, rank);
    if (cgl_made(r) && comm) {
        cgl_add(*comm, cgl_fnv(CGL_FNV0, &commId, sizeof commId));
        cgl_count(*comm, CGL_K_INIT, r, 0, NULL);
    }
    return r;
}

CG_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId commId, int rank,
                                              ncclConfig_t *config)
{
    ncclResult_t r = cgl_guarded_ncclCommInitRankConfig(comm, nranks, commId, rank, config);
    if (cgl_made(r) && comm) {
        cgl_add(*comm, cgl_fnv(CGL_FNV0, &commId, sizeof commId));
        cgl_count(*comm, CGL_K_INIT, r, 0, NULL);
    }
    return r;
}

CG_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *newcomm, int nranks, int myrank, int nId,
                                                ncclUniqueId *commIds, ncclConfig_t *config)
{
    ncclResult_t r = cgl_guarded_ncclCommInitRankScalable(newcomm, nranks, myrank, nId, commIds, config);
    if (cgl_made(r) && newcomm && commIds && nId > 0) {
        cgl_add(*newcomm, cgl_fnv(CGL_FNV0, commIds, (size_t)nId * sizeof *commIds));
        cgl_count(*newcomm, CGL_K_INIT, r, 0, NULL);
    }
    return r;
}

CG_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
    ncclResult_t r = cgl_guarded_ncclCommSplit(comm, color, key, newcomm, config);
    uint64_t child = 0;
    cgl_count(comm, CGL_K_SPLIT, r, color, &child);
    if (cgl_made(r) && newcomm && child) cgl_add(*newcomm, child);
    return r;
}

CG_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int *excludeRanksList, int excludeRanksCount,
                                      ncclComm_t *newcomm, ncclConfig_t *config, int shrinkFlags)
{
    ncclResult_t r =
        cgl_guarded_ncclCommShrink(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
    uint64_t child = 0;
    cgl_count(comm, CGL_K_SHRINK, r, 0, &child);
    if (cgl_made(r) && newcomm && child) cgl_add(*newcomm, child);
    return r;
}

CG_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    ncclResult_t r = cgl_guarded_ncclCommFinalize(comm);
    cgl_count(comm, CGL_K_FINALIZE, r, 0, NULL);
    return r;
}

CG_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    /* Counted before the call: the address is NCCL's to hand out again once it returns. */
    cgl_count(comm, CGL_K_DESTROY, ncclSuccess, 0, NULL);
    cgl_drop(comm);
    return cgl_guarded_ncclCommDestroy(comm);
}

CG_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    cgl_drop(comm);
    return cgl_guarded_ncclCommAbort(comm);
}

/* A collective of kind k on c counted in c's row: without the lock once the row is made (a probe and a
 * load: a collective is made at a high rate), the first time with it. A success adds to the thread's own
 * count of the row (cg_row_count_own: NCCL's calls are not async-signal-safe). */
static void cgl_count_collective(ncclComm_t c, unsigned k, ncclResult_t r)
{
    cgl_comm *e = c ? cgl_find(c) : NULL;
    struct cg_counters *row = e ? atomic_load_explicit(&e->row[k], memory_order_acquire) : NULL;
    if (row && r == ncclSuccess)
        cg_row_count_own(&cgl_sites[cgl_k_site[k]], row, 0);
    else if (row)
        cg_row_count(row, r != ncclInProgress);
    else if (e)
        cgl_count(c, k, r, 0, NULL);
}

/* ---- the collectives: the guarded call, then the communicator's row ---- */
/* A site with nothing to do (statistics off, no lock: `direct` set) has no row to count either: the fast path's
 * tail jump, as a generated wrapper's. */
#define CGL_COLL(name, k, params, args)                                                                                \
    CG_EXPORT ncclResult_t name params                                                                                 \
    {                                                                                                                  \
        CG_DIRECT_CALL(name, args);                                                                                    \
        ncclResult_t r = cgl_guarded_##name args;                                                                      \
        cgl_count_collective(comm, k, r);                                                                              \
        return r;                                                                                                      \
    }
/* clang-format off */
CGL_COLL(ncclAllReduce, CGL_K_ALLREDUCE, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
         ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, op, comm, stream))
CGL_COLL(ncclAllReduceConfig, CGL_K_ALLREDUCE, (const void *sendbuff, void *recvbuff, size_t count,
         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),
         (sendbuff, recvbuff, count, datatype, op, comm, stream, config))
CGL_COLL(ncclBroadcast, CGL_K_BROADCAST, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
         int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, root, comm, stream))
CGL_COLL(ncclBroadcastConfig, CGL_K_BROADCAST, (const void *sendbuff, void *recvbuff, size_t count,
         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),
         (sendbuff, recvbuff, count, datatype, root, comm, stream, config))
CGL_COLL(ncclBcast, CGL_K_BCAST, (void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
         cudaStream_t stream), (buff, count, datatype, root, comm, stream))
CGL_COLL(ncclReduce, CGL_K_REDUCE, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
         ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream),
         (sendbuff, recvbuff, count, datatype, op, root, comm, stream))
CGL_COLL(ncclReduceConfig, CGL_K_REDUCE, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
         ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),
         (sendbuff, recvbuff, count, datatype, op, root, comm, stream, config))
CGL_COLL(ncclAllGather, CGL_K_ALLGATHER, (const void *sendbuff, void *recvbuff, size_t sendcount,
         ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream),
         (sendbuff, recvbuff, sendcount, datatype, comm, stream))
CGL_COLL(ncclAllGatherConfig, CGL_K_ALLGATHER, (const void *sendbuff, void *recvbuff, size_t sendcount,
         ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),
         (sendbuff, recvbuff, sendcount, datatype, comm, stream, config))
CGL_COLL(ncclReduceScatter, CGL_K_REDUCESCATTER, (const void *sendbuff, void *recvbuff, size_t recvcount,
         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream),
         (sendbuff, recvbuff, recvcount, datatype, op, comm, stream))
CGL_COLL(ncclReduceScatterConfig, CGL_K_REDUCESCATTER, (const void *sendbuff, void *recvbuff, size_t recvcount,
         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),
         (sendbuff, recvbuff, recvcount, datatype, op, comm, stream, config))
CGL_COLL(ncclAlltoAll, CGL_K_ALLTOALL, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
         ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, comm, stream))
CGL_COLL(ncclAlltoAllConfig, CGL_K_ALLTOALL, (const void *sendbuff, void *recvbuff, size_t count,
         ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),
         (sendbuff, recvbuff, count, datatype, comm, stream, config))
CGL_COLL(ncclGather, CGL_K_GATHER, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
         int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, root, comm, stream))
CGL_COLL(ncclGatherConfig, CGL_K_GATHER, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
         int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),
         (sendbuff, recvbuff, count, datatype, root, comm, stream, config))
CGL_COLL(ncclScatter, CGL_K_SCATTER, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
         int root, ncclComm_t comm, cudaStream_t stream), (sendbuff, recvbuff, count, datatype, root, comm, stream))
CGL_COLL(ncclScatterConfig, CGL_K_SCATTER, (const void *sendbuff, void *recvbuff, size_t count,
         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t *config),
         (sendbuff, recvbuff, count, datatype, root, comm, stream, config))
/* clang-format on */
