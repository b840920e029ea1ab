/* abi_int_proto.h: abi_int.h's prototypes. */
int abSend(const void *buf, int count, ab_comm comm);
int abSend_c(const void *buf, ab_count count, ab_comm comm);
/* a handle of the standard ABI, an int here: passed as a handle (void *) */
int abSession_c2f(ab_session session);
