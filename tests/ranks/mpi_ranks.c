/* An MPI program for the rank tests, linked against the toy library like a
 * program linked against a vendor driver: rank R makes 10 + R toyAdd calls
 * (a known count per rank), the ranks sum their numbers with
 * MPI_Allreduce, and each prints one line. argv[1], when given, is a
 * marker the tests find leftover processes by. */
#include <mpi.h>
#include <stdio.h>
#include <toy.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int32_t total = 0;
    for (int i = 0; i < 10 + rank; i++) {
        int32_t s;
        toyAdd(i, 1, &s);
        total += s;
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d: toy total %d, sum of ranks %d\n", rank, size, (int)total, sum);
    MPI_Finalize();
    return 0;
}
