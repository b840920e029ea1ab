/* abi_int.h: an ABI of int handles (tests/gen/data/abi.ini), as MPICH's mpi.h; its prototypes are in a
 * header beside it, as MPICH's in mpi_proto.h. */
#ifndef ABI_INT_H
#define ABI_INT_H
typedef int ab_comm;
typedef int ab_session;
typedef long long ab_count;
#include "abi_int_proto.h"
#endif
