/*
 * libze_cgsim_compiler.so: what the simulator opens on its first SPIR-V compile, in the place of NEO's libigc.so
 * (compiler.c says why). It compiles nothing; loading it is its whole job.
 */
__attribute__((visibility("default"))) const char *cgsim_compiler_version(void);

const char *cgsim_compiler_version(void) { return "callguard simulator compiler 1"; }
