/* Stands in for libcgcuda-next.so at link time only: never loaded. */
typedef int cg_next_stub;
