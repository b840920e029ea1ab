/* Stands in for the real library at link time only: never loaded. */
typedef int cg_real_stub;
