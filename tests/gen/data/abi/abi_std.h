/* abi_std.h: a standard ABI (tests/gen/data/abi.ini): pointer handles of other types, as mpi_abi.h. */
#ifndef ABI_STD_H
#define ABI_STD_H
#include <stdint.h>
typedef struct ab_comm_std *ab_comm;
typedef struct ab_session_std *ab_session;
typedef int64_t ab_count;
typedef void(ab_fn)(void *, ab_count *);
enum ab_mode { AB_MODE_A, AB_MODE_B };
int abSend(const void *buf, int count, ab_comm comm);
int abSend_c(const void *buf, ab_count count, ab_comm comm);
long abAdd(long a, long b);
int abMode(enum ab_mode mode, const ab_count counts[], ab_fn *fn, char **names, double when);
ab_comm abComm_fromint(int comm);
int abVariadic(int n, ...);
#endif
