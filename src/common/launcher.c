/* A job's launcher says which rank a process is through its environment:
 * each launcher its own variables. They are read once at start-up into the
 * statistics header, so every report names the rank and host of each
 * process; the call path never reads them. */
#include "launcher.h"

#include <stdlib.h>
#include <string.h>

/* Innermost launcher first: a launcher started under another one sees the
 * outer one's variables as well (ranks started by mpirun inside a Slurm
 * allocation inherit its SLURM_PROCID, torchrun's workers inside an srun
 * step too), and the rank that tells processes apart is the inner one's. */
static const struct {
    const char *rank, *local, *size, *also; /* also: a variable that must be set too; NULL: none */
} cgi_launchers[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", NULL}, /* Open MPI */
    {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_SIZE", NULL},    /* MVAPICH2 */
    {"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", NULL},               /* MPICH's and Intel MPI's Hydra, PMI-1/2 */
    {"PMIX_RANK", NULL, NULL, NULL},                                 /* a PMIx server (srun --mpi=pmix, PRRTE) */
    {"PALS_RANKID", "PALS_LOCAL_RANKID", NULL, NULL},                /* HPE Cray PALS */
    {"FLUX_TASK_RANK", "FLUX_TASK_LOCAL_ID", "FLUX_JOB_SIZE", NULL}, /* Flux */
    /* RANK alone is too common a name: torchrun (and the launchers that
     * copy it) set WORLD_SIZE with it. */
    {"RANK", "LOCAL_RANK", "WORLD_SIZE", "WORLD_SIZE"},      /* torchrun */
    {"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", NULL}, /* srun */
};

/* A variable's value as a rank: digits only, 1 to 9 of them; -1 otherwise. */
static int32_t cgi_rank_value(const char *name)
{
    const char *v = name ? getenv(name) : NULL;
    size_t n = v ? strlen(v) : 0;
    if (n == 0 || n > 9 || strspn(v, "0123456789") != n) return -1;
    return (int32_t)strtol(v, NULL, 10);
}

void cgi_launcher_rank(cgi_rank *out)
{
    *out = (cgi_rank){.rank = -1, .local_rank = -1, .world_size = -1};
    for (size_t i = 0; i < sizeof cgi_launchers / sizeof *cgi_launchers; i++) {
        int32_t rank = cgi_rank_value(cgi_launchers[i].rank);
        if (rank < 0 || (cgi_launchers[i].also && !getenv(cgi_launchers[i].also))) continue;
        out->rank = rank;
        out->local_rank = cgi_rank_value(cgi_launchers[i].local);
        out->world_size = cgi_rank_value(cgi_launchers[i].size);
        strcpy(out->from, cgi_launchers[i].rank);
        return;
    }
}
