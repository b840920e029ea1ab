/* large_count.c: two threads per rank, one exchanging messages with the other rank by the large-count
 * calls of MPI 4.0 (MPI_Send_c, MPI_Recv_c), the other summing over both ranks (MPI_Allreduce), as a
 * program written for MPI_THREAD_MULTIPLE does (tests/mpi/test_mpi.py).
 *
 *     large_count multiple|serialized ROUNDS     (under mpirun or mpiexec -n 2)
 *
 * Each round thread 0 of rank 0 sends a value to rank 1's thread 0 and receives one back (rank 1
 * the other way round): ROUNDS MPI_Send_c and ROUNDS MPI_Recv_c per rank. Thread 1 makes ROUNDS
 * MPI_Allreduce calls meanwhile. Built against an MPI older than 4.0 (Open MPI 4.1) the exchange
 * uses MPI_Send and MPI_Recv. Rank 0 prints which calls it used, the level it asked for, the level
 * it was told, and a checksum of every value received. Exit status 3 when a value is wrong. */
#include <mpi.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4
#define SEND(buf, n, type, to, tag, comm) MPI_Send_c(buf, (MPI_Count)(n), type, to, tag, comm)
#define RECV(buf, n, type, from, tag, comm) MPI_Recv_c(buf, (MPI_Count)(n), type, from, tag, comm, MPI_STATUS_IGNORE)
#define CALLS "MPI_Send_c/MPI_Recv_c"
#else
#define SEND(buf, n, type, to, tag, comm) MPI_Send(buf, n, type, to, tag, comm)
#define RECV(buf, n, type, from, tag, comm) MPI_Recv(buf, n, type, from, tag, comm, MPI_STATUS_IGNORE)
#define CALLS "MPI_Send/MPI_Recv"
#endif

static int rank, rounds;
static MPI_Comm comms[2];
static long sums[2];
static int bad;

static const char *level_name(int level)
{
    if (level == MPI_THREAD_SINGLE) return "single";
    if (level == MPI_THREAD_FUNNELED) return "funneled";
    if (level == MPI_THREAD_SERIALIZED) return "serialized";
    if (level == MPI_THREAD_MULTIPLE) return "multiple";
    return "?";
}

static long value(int r, int i) { return (long)(r + 1) * 100000 + i; }

static void *exchange(void *arg)
{
    (void)arg;
    int other = 1 - rank;
    for (int i = 0; i < rounds; i++) {
        long v = value(rank, i), got = -1;
        if (rank == 0) {
            SEND(&v, 1, MPI_LONG, other, 5, comms[0]);
            RECV(&got, 1, MPI_LONG, other, 6, comms[0]);
        } else {
            RECV(&got, 1, MPI_LONG, other, 5, comms[0]);
            SEND(&v, 1, MPI_LONG, other, 6, comms[0]);
        }
        if (got != value(other, i)) bad = 1;
        sums[0] += got;
    }
    return NULL;
}

static void *reduce(void *arg)
{
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        long v = value(rank, i), total = 0;
        MPI_Allreduce(&v, &total, 1, MPI_LONG, MPI_SUM, comms[1]);
        if (total != value(0, i) + value(1, i)) bad = 1;
        sums[1] += total;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: large_count multiple|serialized ROUNDS\n");
        return 2;
    }
    int asked = strcmp(argv[1], "serialized") == 0 ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE;
    rounds = atoi(argv[2]);
    int told = -1, size = 0;
    if (MPI_Init_thread(&argc, &argv, asked, &told) != MPI_SUCCESS) return 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "large_count: needs 2 ranks, has %d\n", size);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    pthread_t th[2];
    pthread_create(&th[0], NULL, exchange, NULL);
    pthread_create(&th[1], NULL, reduce, NULL);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
    long mine = sums[0] + sums[1], all = 0;
    int anybad = 0;
    MPI_Reduce(&mine, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    int library = -1;
    PMPI_Query_thread(&library); /* past any tool: the level the library itself holds */
    if (rank == 0)
        printf("calls %s asked %s told %s library %s checksum %ld%s\n", CALLS, level_name(asked), level_name(told),
               level_name(library), all, anybad ? " WRONG" : "");
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    MPI_Finalize();
    return anybad ? 3 : 0;
}
