/* A stand-in for libnccl.so.2, for tests only (tests/nccl): NCCL needs a GPU to make a communicator, this
 * machine has none. It answers the calls tests/nccl/comms.c makes as NCCL would on a GPU, with nothing behind
 * them: a communicator is a small allocation that knows its rank and size; collectives succeed at once. */
#include <nccl.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ncclComm {
    int rank, nranks;
};

__attribute__((visibility("default"))) ncclResult_t ncclGetVersion(int *version)
{
    if (!version) return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    if (!id) return ncclInvalidArgument;
    memset(id, 0x5a, sizeof *id);
    return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                                                                     int rank)
{
    (void)id;
    if (!comm || nranks < 1 || rank < 0 || rank >= nranks) return ncclInvalidArgument;
    if (!(*comm = malloc(sizeof **comm))) return ncclSystemError;
    (*comm)->rank = rank, (*comm)->nranks = nranks;
    return ncclSuccess;
}

/* Every rank's color and key are not known here: the new communicator is this rank alone. */
__attribute__((visibility("default"))) ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                                                                  ncclComm_t *newcomm, ncclConfig_t *config)
{
    (void)key, (void)config;
    if (!comm || !newcomm) return ncclInvalidArgument;
    if (color == NCCL_SPLIT_NOCOLOR) return *newcomm = NULL, ncclSuccess;
    if (!(*newcomm = malloc(sizeof **newcomm))) return ncclSystemError;
    (*newcomm)->rank = 0, (*newcomm)->nranks = 1;
    return ncclSuccess;
}

__attribute__((visibility("default"))) ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                                                                  ncclDataType_t datatype, ncclRedOp_t op,
                                                                  ncclComm_t comm, cudaStream_t stream)
{
    (void)sendbuff, (void)recvbuff, (void)count, (void)datatype, (void)op, (void)stream;
    return comm ? ncclSuccess : ncclInvalidArgument;
}

/* CGNCCL_DESTROY_MS=N: waits N ms first, as a teardown waiting for a rank that never comes. */
__attribute__((visibility("default"))) ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    const char *ms = getenv("CGNCCL_DESTROY_MS");
    if (ms && comm) {
        long n = atol(ms);
        struct timespec t = {n / 1000, (n % 1000) * 1000000L};
        while (nanosleep(&t, &t) != 0) {}
    }
    free(comm);
    return ncclSuccess;
}
