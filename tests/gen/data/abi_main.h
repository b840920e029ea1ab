/* abi_main.h: the ABI the layer is compiled with (tests/gen/data/abi.ini): pointer handles. */
#ifndef ABI_MAIN_H
#define ABI_MAIN_H
#define AB_SUCCESS 0
#define AB_ERR_INTERN 17
typedef struct ab_comm_main *ab_comm;
typedef long long ab_count;
int abSend(const void *buf, int count, ab_comm comm);
/* a macro here, a function in the other ABIs (Open MPI 4.1's MPI_Aint_add) */
#define abAdd(a, b) ((a) + (b))
#endif
