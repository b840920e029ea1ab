/* The rank a job's launcher gave this process (launcher.c). */
#ifndef CGI_LAUNCHER_H
#define CGI_LAUNCHER_H

#include "common.h"

#include <stdint.h>

/* The largest rank taken from a launcher's variable: 9 digits at most. */
#define CGI_RANK_MAX 999999999

typedef struct cgi_rank {
    int32_t rank;       /* -1: no launcher named one */
    int32_t local_rank; /* its rank among the job's processes on this host; -1: not known */
    int32_t world_size; /* the job's number of ranks, from the same launcher; -1: not known */
    char from[32];      /* the variable the rank came from ("OMPI_COMM_WORLD_RANK"); "" when none */
} cgi_rank;

/* Reads the launchers' variables from the environment: the first launcher
 * (in the order of launcher.c's table) whose rank variable holds a valid
 * number gives rank, local rank and world size. Only digits, at most 9 of them, are a
 * number; any other value is as if unset. Called once at start-up (the
 * runtime) or before the program starts (the CLI), never on a call. */
CGI_HIDDEN void cgi_launcher_rank(cgi_rank *out);

#endif
