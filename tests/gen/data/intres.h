/* intres.h: an API whose result is a plain int with macro codes, as MPI's (tests/gen/generates.sh,
 * gen_int_results_and_real_prefix). */
#ifndef INTRES_H
#define INTRES_H

#define IR_SUCCESS 0
#define IR_ERR_ARG 1
#define IR_ERR_LAST 2
/* a macro for int that is no result code, as MPI's MPI_Fint */
#define IR_Fint int

/* Returns a code. */
int irDo(int x);
/* Returns a Fortran-style handle, never an error. */
IR_Fint irToF(int x);
/* Returns a code through the profiling name too (PirDo is the real one). */
int PirDo(int x);

#endif
