/* abi_narrow.h: an ABI whose abSend takes a wider count than abi_main.h's (tests/gen/data/abi_narrow.ini). */
typedef struct ab_comm_narrow *ab_comm;
int abSend(const void *buf, long count, ab_comm comm);
