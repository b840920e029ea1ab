/* comms.c RANK NRANKS COLOR WORLD_N SUB_N: one rank of a job on the stand-in libnccl.so.2 (standin.c): a world
 * communicator from a unique id all ranks share, WORLD_N all-reduces on it, a split by COLOR, SUB_N all-reduces
 * on the part, both destroyed (tests/nccl/test_nccl.py: a job's counts per communicator). */
#include <nccl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: comms RANK NRANKS COLOR WORLD_N SUB_N\n");
        return 2;
    }
    int rank = atoi(argv[1]), nranks = atoi(argv[2]), color = atoi(argv[3]);
    int world_n = atoi(argv[4]), sub_n = atoi(argv[5]);
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    strcpy(id.internal, "one job's id"); /* as rank 0's ncclGetUniqueId, handed to every rank */
    ncclComm_t world = NULL, sub = NULL;
    if (ncclCommInitRank(&world, nranks, id, rank) != ncclSuccess) return 1;
    float x = 1;
    for (int i = 0; i < world_n; i++)
        if (ncclAllReduce(&x, &x, 1, ncclFloat, ncclSum, world, NULL) != ncclSuccess) return 1;
    if (ncclCommSplit(world, color, rank, &sub, NULL) != ncclSuccess) return 1;
    for (int i = 0; i < sub_n; i++)
        if (ncclAllReduce(&x, &x, 1, ncclFloat, ncclSum, sub, NULL) != ncclSuccess) return 1;
    ncclCommDestroy(sub);
    ncclCommDestroy(world);
    printf("rank %d done\n", rank);
    return 0;
}
