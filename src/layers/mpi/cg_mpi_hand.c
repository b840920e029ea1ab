/* cg_mpi_hand.c: the MPI layer's hand-written wrappers (wrapper = hand in apis/mpi.ini): the thread
 * level fix, CALLGUARD_MPI_THREADS=serialize (docs/mpi.md). cg_mpi.c #includes this file at its end,
 * so it sees the generated cgl_sites, cgl_layer, the frames and cgl_guarded_<name>
 * (include/callguard/layer.h, "Hand-written wrappers"). Not compiled on its own.
 *
 * Without the setting every wrapper here is the generated guarded call plus one load.
 *
 * With it, a program that needs MPI_THREAD_MULTIPLE runs on a library initialized
 * MPI_THREAD_SERIALIZED: every MPI call of the process takes one lock, the domain "mpi". A lock
 * held through a blocking call would deadlock as soon as the matching call is another thread's of
 * the same rank (a receive waiting for a send that cannot take the lock), and two ranks whose
 * lock holders wait in different collectives deadlock each other. So the blocking calls below
 * are made as their nonblocking forms and completed by tests, the lock taken around each real
 * call and released between tests (as LLNL's Aluminum does). The blocking call stays one guarded
 * call (cg_call with a thunk of this file's): counted and timed once under its own name, a stall
 * when it waits with the runtime held, and the runtime left around the whole wait under
 * --release-gil. Between tests the thread yields, then sleeps up to 256 µs, so a waiting thread
 * never takes a whole core from the thread that will satisfy it.
 *
 * Nothing here may name one of libmpi's data symbols (Open MPI's MPI_REQUEST_NULL is
 * &ompi_request_null): the layer is loaded into processes that have no libmpi.
 *
 * The layer is compiled with Open MPI's mpi.h, and its generated wrappers forward each argument
 * whole, so MPICH's int handles and the standard ABI's pointers pass through them. The requests and
 * statuses made here, and the constants passed, are the library's own: their sizes and values come
 * from its ABI (cgm_abi), chosen before the library initializes by MPI_Abi_get_version (the MPI 5.0
 * standard ABI) or the name the library gives. The large-count forms (MPI_Send_c, ...) are in
 * cg_mpi_large_count.c, included at the end. */

#include <callguard/callguard.h>

#include "cg_mpi_abi.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the thread fix passes to the library that Open MPI's mpi.h does not give for every ABI. */
struct cgm_abi {
    const char *name;                           /* how MPI_Get_library_version's answer starts */
    size_t request_size;                        /* sizeof(MPI_Request) */
    size_t status_size;                         /* sizeof(MPI_Status) */
    size_t error_offset;                        /* offsetof(MPI_Status, MPI_ERROR) */
    uintptr_t status_ignore;                    /* MPI_STATUS_IGNORE */
    int proc_null;                              /* MPI_PROC_NULL */
    int err_intern;                             /* MPI_ERR_INTERN */
    int err_in_status;                          /* MPI_ERR_IN_STATUS */
    int single, funneled, serialized, multiple; /* MPI_THREAD_SINGLE .. MPI_THREAD_MULTIPLE */
};

/* The libraries the thread fix is tested on (Debian 12's Open MPI 4.1.4, PyPI's Open MPI 5.0.11, Debian's
 * MPICH 4.0.2, PyPI's MPICH 5.0.2 and Intel MPI 2021.18.1, docs/mpi.md), told by the name
 * MPI_Get_library_version gives. Intel MPI's libmpi.so.12 has MPICH's ABI (its mpi.h: the build checks it). */
static const struct cgm_abi cgm_abis[] = {
    {"Open MPI", sizeof(MPI_Request), sizeof(MPI_Status), offsetof(MPI_Status, MPI_ERROR), (uintptr_t)MPI_STATUS_IGNORE,
     MPI_PROC_NULL, MPI_ERR_INTERN, MPI_ERR_IN_STATUS, MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
     MPI_THREAD_MULTIPLE},
    {"MPICH Version:", CGM_MPICH_REQUEST_SIZE, CGM_MPICH_STATUS_SIZE, CGM_MPICH_ERROR_OFFSET, CGM_MPICH_STATUS_IGNORE,
     CGM_MPICH_PROC_NULL, CGM_MPICH_ERR_INTERN, CGM_MPICH_ERR_IN_STATUS, CGM_THREAD_SINGLE, CGM_THREAD_FUNNELED,
     CGM_THREAD_SERIALIZED, CGM_THREAD_MULTIPLE},
    {"Intel(R) MPI Library", CGM_MPICH_REQUEST_SIZE, CGM_MPICH_STATUS_SIZE, CGM_MPICH_ERROR_OFFSET,
     CGM_MPICH_STATUS_IGNORE, CGM_MPICH_PROC_NULL, CGM_MPICH_ERR_INTERN, CGM_MPICH_ERR_IN_STATUS, CGM_THREAD_SINGLE,
     CGM_THREAD_FUNNELED, CGM_THREAD_SERIALIZED, CGM_THREAD_MULTIPLE},
};
/* MPI 5.0's standard ABI (MPICH's libmpi_abi.so.1), told by MPI_Abi_get_version: its values are mpi_abi.h's. */
static const struct cgm_abi cgm_abi_std = {"the MPI standard ABI",  CGM_STD_REQUEST_SIZE,      CGM_STD_STATUS_SIZE,
                                           CGM_STD_ERROR_OFFSET,    CGM_STD_STATUS_IGNORE,     CGM_STD_PROC_NULL,
                                           CGM_STD_ERR_INTERN,      CGM_STD_ERR_IN_STATUS,     CGM_STD_THREAD_SINGLE,
                                           CGM_STD_THREAD_FUNNELED, CGM_STD_THREAD_SERIALIZED, CGM_STD_THREAD_MULTIPLE};
_Static_assert(MPI_SUCCESS == CGM_SUCCESS, "Open MPI's MPI_SUCCESS is every ABI's");
_Static_assert(MPI_THREAD_SINGLE == CGM_THREAD_SINGLE && MPI_THREAD_FUNNELED == CGM_THREAD_FUNNELED &&
                   MPI_THREAD_SERIALIZED == CGM_THREAD_SERIALIZED && MPI_THREAD_MULTIPLE == CGM_THREAD_MULTIPLE,
               "Open MPI's thread levels are MPICH's");
/* Room for a request and a status of any of them. */
#define CGM_REQUEST_MAX 8
#define CGM_STATUS_MAX 32
_Static_assert(sizeof(MPI_Request) <= CGM_REQUEST_MAX && sizeof(MPI_Status) <= CGM_STATUS_MAX &&
                   CGM_MPICH_REQUEST_SIZE <= CGM_REQUEST_MAX && CGM_MPICH_STATUS_SIZE <= CGM_STATUS_MAX &&
                   CGM_STD_REQUEST_SIZE <= CGM_REQUEST_MAX && CGM_STD_STATUS_SIZE <= CGM_STATUS_MAX,
               "room for requests and statuses");

/* Notes the library's constants for the arguments a blocking call waits on (cg_mpi_wait.c). */
static void cgm_note_names(void);

/* The process's library's ABI, set before the setting takes effect (cgm_check_library). */
static const struct cgm_abi *cgm_abi = &cgm_abis[0];
#define CGM_STATUS_IGNORE ((MPI_Status *)cgm_abi->status_ignore)

/* 1 once MPI_Init or MPI_Init_thread ran under CALLGUARD_MPI_THREADS=serialize. */
static _Atomic int cgm_serialize;
static uint32_t cgm_domain;
/* The level the program was told by MPI_Init_thread (MPI_Query_thread answers it); -1: the
 * library's own answer. */
static _Atomic int cgm_told = -1;

static int cgm_setting_serialize(void)
{
    const char *v = getenv("CALLGUARD_MPI_THREADS");
    return v && strcmp(v, "serialize") == 0; /* the runtime refused any value but library and serialize */
}

/* The real function of site i (PMPI_<name>), resolved on first use. */
static void *cgm_real(unsigned i)
{
    void *p = atomic_load_explicit(&cgl_sites[i].real, memory_order_acquire);
    return p ? p : cg_real_function(&cgl_layer, cgl_sites[i].name);
}

/* INAME's real function called with the domain's lock held; MPI_ERR_INTERN without a library. */
#define CGM_LOCKED(INAME, ...)                                                                                         \
    __extension__({                                                                                                    \
        __typeof__(INAME) *cgm_fn = (__typeof__(INAME) *)cgm_real(CGL_##INAME);                                        \
        int cgm_rc = cgm_abi->err_intern;                                                                              \
        if (cgm_fn) {                                                                                                  \
            cg_domain_hold(cgm_domain);                                                                                \
            cgm_rc = cgm_fn(__VA_ARGS__);                                                                              \
            cg_domain_release(cgm_domain);                                                                             \
        }                                                                                                              \
        cgm_rc;                                                                                                        \
    })

/* Between two tests: the lock is free; yield first, then sleep longer each time, up to 256 µs. */
static void cgm_pause(unsigned n)
{
    if (n < 8) {
        sched_yield();
        return;
    }
    unsigned us = n < 16 ? 1u << (n - 8) : 256;
    struct timespec ts = {0, (long)us * 1000};
    nanosleep(&ts, NULL);
}

/* Tests the request until it completes. */
static int cgm_complete(MPI_Request *r, MPI_Status *status)
{
    for (unsigned n = 0;; n++) {
        int done = 0, rc = CGM_LOCKED(MPI_Test, r, &done, status);
        if (rc != MPI_SUCCESS || done) return rc;
        cgm_pause(n);
    }
}

/* The body of the blocking call NAME's exported wrapper: the generated guarded call, or under the
 * setting one guarded call (its site's statistics and runtime transition; the site is in no
 * domain) whose thunk cgm_th_NAME completes it by tests. */
#define CGM_BY_TESTS(NAME, ...)                                                                                        \
    if (CG_LIKELY(!atomic_load_explicit(&cgm_serialize, memory_order_relaxed)))                                        \
        return cgl_guarded_##NAME(__VA_ARGS__);                                                                        \
    struct cgl_fr_##NAME f = {__VA_ARGS__, cgm_abi->err_intern};                                                       \
    (void)cg_call(&cgl_sites[CGL_##NAME], NULL, cgm_th_##NAME, &f);                                                    \
    return f.cgl_ret

/* A thunk that starts INAME(ARGS..., &request) and tests the request; its status goes to STATUS. The
 * request is Open MPI's 8 bytes: MPICH writes and reads its int in the first 4.
 * It ends in its own prototype, so that a use ends with a semicolon as a declaration does. */
#define CGM_THUNK_BY_REQUEST(NAME, INAME, STATUS, ...)                                                                 \
    static int cgm_th_##NAME(void *frame)                                                                              \
    {                                                                                                                  \
        struct cgl_fr_##NAME *f = frame;                                                                               \
        MPI_Request r;                                                                                                 \
        int rc = CGM_LOCKED(INAME, __VA_ARGS__, &r);                                                                   \
        if (rc == MPI_SUCCESS) rc = cgm_complete(&r, STATUS);                                                          \
        f->cgl_ret = rc;                                                                                               \
        return cgl_thunk_code(rc);                                                                                     \
    }                                                                                                                  \
    static int cgm_th_##NAME(void *frame)

/* ---- initialization: what the library is asked and what the program is told -------------------- */

/* Every site but the ones completed by tests joins the domain "mpi"; those leave any domain. */
static void cgm_serialize_all(void)
{
    static const unsigned by_tests[] = {
        CGL_MPI_Send,
        CGL_MPI_Bsend,
        CGL_MPI_Ssend,
        CGL_MPI_Rsend,
        CGL_MPI_Recv,
        CGL_MPI_Sendrecv,
        CGL_MPI_Probe,
        CGL_MPI_Mprobe,
        CGL_MPI_Mrecv,
        CGL_MPI_Wait,
        CGL_MPI_Waitall,
        CGL_MPI_Waitany,
        CGL_MPI_Waitsome,
        CGL_MPI_Barrier,
        CGL_MPI_Bcast,
        CGL_MPI_Reduce,
        CGL_MPI_Allreduce,
        CGL_MPI_Gather,
        CGL_MPI_Gatherv,
        CGL_MPI_Scatter,
        CGL_MPI_Scatterv,
        CGL_MPI_Allgather,
        CGL_MPI_Allgatherv,
        CGL_MPI_Alltoall,
        CGL_MPI_Alltoallv,
        CGL_MPI_Alltoallw,
        CGL_MPI_Reduce_scatter,
        CGL_MPI_Reduce_scatter_block,
        CGL_MPI_Scan,
        CGL_MPI_Exscan,
        /* their large-count forms (cg_mpi_large_count.c) */
        CGL_MPI_Send_c,
        CGL_MPI_Bsend_c,
        CGL_MPI_Ssend_c,
        CGL_MPI_Rsend_c,
        CGL_MPI_Recv_c,
        CGL_MPI_Sendrecv_c,
        CGL_MPI_Mrecv_c,
        CGL_MPI_Bcast_c,
        CGL_MPI_Reduce_c,
        CGL_MPI_Allreduce_c,
        CGL_MPI_Gather_c,
        CGL_MPI_Gatherv_c,
        CGL_MPI_Scatter_c,
        CGL_MPI_Scatterv_c,
        CGL_MPI_Allgather_c,
        CGL_MPI_Allgatherv_c,
        CGL_MPI_Alltoall_c,
        CGL_MPI_Alltoallv_c,
        CGL_MPI_Alltoallw_c,
        CGL_MPI_Reduce_scatter_c,
        CGL_MPI_Reduce_scatter_block_c,
        CGL_MPI_Scan_c,
        CGL_MPI_Exscan_c,
    };
    unsigned char tested[CGL_NSITES] = {0};
    for (size_t i = 0; i < sizeof by_tests / sizeof by_tests[0]; i++)
        tested[by_tests[i]] = 1;
    cgm_domain = cg_domain_id("mpi");
    if (!cgm_domain) {
        fprintf(stderr, "callguard: CALLGUARD_MPI_THREADS=serialize: no lock domain: %s\n", cg_last_error());
        exit(2);
    }
    /* A site completed by tests takes the lock itself, around each real call: in a domain too (a
     * --serialize of the user's), its guarded call would hold that lock through the whole wait, and
     * in "mpi" it would take the lock twice. */
    for (unsigned i = 0; i < CGL_NSITES; i++)
        cg_serialize(cgl_sites[i].name, tested[i] ? NULL : "mpi", CG_SCOPE_PROCESS);
    atomic_store(&cgm_serialize, 1);
}

/* Sets cgm_abi before the library initializes: the standard ABI where MPI_Abi_get_version (MPI 5.0,
 * callable before MPI_Init) says ABI 1 or later (MPICH 5's libmpi.so.12 says -1); else by the name the
 * library gives (MPI_Get_library_version may be called before MPI_Init; MPICH's answer can be 8192 bytes
 * long). A library of another name (MVAPICH, Cray MPICH: MPICH's ABI, but not tested here), or
 * a libmpi_abi that does not say its ABI version, stops the program, named. */
static void cgm_check_library(void)
{
    static char version[8192 + 1];
    int len = 0, major = -1, minor = -1;
    /* Asked only where a library has it: a real function missing is a warning on stderr. */
    int (*abi_version)(int *, int *) = cg_loaded_defines("PMPI_Abi_get_version", (const void *)cgm_check_library)
                                           ? cg_real_function(&cgl_layer, "MPI_Abi_get_version")
                                           : NULL;
    if (abi_version && abi_version(&major, &minor) == CGM_SUCCESS && major >= 1) {
        cgm_abi = &cgm_abi_std;
        return;
    }
    int (*get)(char *, int *) = cg_real_function(&cgl_layer, "MPI_Get_library_version");
    Dl_info lib = {0};
    const char *file = get && dladdr((void *)get, &lib) && lib.dli_fname ? lib.dli_fname : "";
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    if (get && get(version, &len) == MPI_SUCCESS && strncmp(base, "libmpi_abi", 10) != 0) {
        for (size_t i = 0; i < sizeof cgm_abis / sizeof cgm_abis[0]; i++) {
            if (strncmp(version, cgm_abis[i].name, strlen(cgm_abis[i].name)) == 0) {
                cgm_abi = &cgm_abis[i];
                return;
            }
        }
    }
    version[sizeof version - 1] = '\0';
    char *nl = strchr(version, '\n');
    if (nl) *nl = '\0';
    fprintf(stderr,
            "callguard: CALLGUARD_MPI_THREADS=serialize: this process's MPI library is \"%.60s\"%s%s; the thread "
            "fix is tested on Open MPI, MPICH, Intel MPI and the MPI 5.0 standard ABI only (docs/mpi.md)\n",
            get ? version : "unknown: no MPI_Get_library_version", *base ? ", " : "", base);
    exit(2);
}

/* The library's identity for the quirks file (cg_layer_identify, docs/quirks.md), asked for once
 * MPI_Init or MPI_Init_thread succeeded; the runtime runs it once per process and only when the quirks
 * file has an MPI quirk. MPI_Get_library_version: the name is the text before the first word that
 * starts with a digit, less a trailing "Version:" or "v"; the version is that word's leading dotted
 * numbers: "MPICH Version:\t5.0.0 ..." is MPICH 5.0.0, "Open MPI v4.1.4, package: ..." Open MPI 4.1.4.
 * No vendor id (0). */
static unsigned cgm_probe(cg_layer *l, cg_identity *ids, unsigned max)
{
    static char text[8192 + 1]; /* under the runtime's probe lock; MPICH's answer can be 8192 bytes */
    int len = 0;
    int (*get)(char *, int *) = cg_real_function(l, "MPI_Get_library_version");
    if (!max || !get || get(text, &len) != MPI_SUCCESS) return 0;
    text[sizeof text - 1] = '\0';
    const char *v = text;
    while (*v && *v != '\n' && !(v[0] >= '0' && v[0] <= '9' && (v == text || strchr(" \tv", v[-1]))))
        v++;
    if (!(*v >= '0' && *v <= '9')) return 0;
    size_t n = (size_t)(v - text);
    while (n && strchr(" \t:v", text[n - 1]))
        n--;
    if (n >= 8 && strncmp(text + n - 8, " Version", 8) == 0) n -= 8;
    cg_identity *id = &ids[0];
    memset(id, 0, sizeof *id);
    snprintf(id->name, sizeof id->name, "%.*s", (int)n, text);
    snprintf(id->version, sizeof id->version, "%.*s", (int)strspn(v, "0123456789."), v);
    return 1;
}

CG_EXPORT int MPI_Init(int *argc, char ***argv)
{
    int serialize = cgm_setting_serialize();
    if (serialize) cgm_check_library();
    int rc = cgl_guarded_MPI_Init(argc, argv);
    if (rc == MPI_SUCCESS) cgm_note_names();
    if (rc == MPI_SUCCESS && serialize) cgm_serialize_all();
    if (rc == MPI_SUCCESS) cg_layer_identify(&cgl_layer, cgm_probe);
    return rc;
}

/* Under the setting the library is asked for at most MPI_THREAD_SERIALIZED, which the lock gives
 * it; a program that asked for more is told what it asked for when the library gave
 * SERIALIZED, since every call is then serialized for it. A library that gave less (FUNNELED:
 * only the main thread may call) is not made safe by a lock: the program is told that. */
CG_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!cgm_setting_serialize()) {
        int rc = cgl_guarded_MPI_Init_thread(argc, argv, required, provided);
        if (rc == MPI_SUCCESS) cgm_note_names();
        if (rc == MPI_SUCCESS) cg_layer_identify(&cgl_layer, cgm_probe);
        return rc;
    }
    cgm_check_library();
    /* A level that is none of the four (42) goes to the library as it is, which answers it as it
     * would plainly (Open MPI 4.1 aborts the program), and the program is told the library's answer. */
    const struct cgm_abi *abi = cgm_abi; /* the levels in its order: single < funneled < serialized < multiple */
    int valid = required == abi->single || required == abi->funneled || required == abi->serialized ||
                required == abi->multiple;
    int asked = valid && required > abi->serialized ? abi->serialized : required;
    int rc = cgl_guarded_MPI_Init_thread(argc, argv, asked, provided);
    if (rc != MPI_SUCCESS) return rc;
    if (valid && *provided >= abi->serialized && required > *provided) *provided = required;
    atomic_store(&cgm_told, *provided);
    cgm_note_names();
    cgm_serialize_all();
    cg_layer_identify(&cgl_layer, cgm_probe);
    return rc;
}

CG_EXPORT int MPI_Query_thread(int *provided)
{
    int told = atomic_load_explicit(&cgm_told, memory_order_relaxed);
    int rc = cgl_guarded_MPI_Query_thread(provided);
    if (rc == MPI_SUCCESS && told >= 0) *provided = told;
    return rc;
}

/* ---- point to point ---- */

CGM_THUNK_BY_REQUEST(MPI_Send, MPI_Isend, CGM_STATUS_IGNORE, f->buf, f->count, f->datatype, f->dest, f->tag, f->comm);
CG_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Send, buf, count, datatype, dest, tag, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Bsend, MPI_Ibsend, CGM_STATUS_IGNORE, f->buf, f->count, f->datatype, f->dest, f->tag, f->comm);
CG_EXPORT int MPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Bsend, buf, count, datatype, dest, tag, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Ssend, MPI_Issend, CGM_STATUS_IGNORE, f->buf, f->count, f->datatype, f->dest, f->tag, f->comm);
CG_EXPORT int MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Ssend, buf, count, datatype, dest, tag, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Rsend, MPI_Irsend, CGM_STATUS_IGNORE, f->ibuf, f->count, f->datatype, f->dest, f->tag,
                     f->comm);
CG_EXPORT int MPI_Rsend(const void *ibuf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Rsend, ibuf, count, datatype, dest, tag, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Recv, MPI_Irecv, f->status, f->buf, f->count, f->datatype, f->source, f->tag, f->comm);
CG_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                       MPI_Status *status)
{
    CGM_BY_TESTS(MPI_Recv, buf, count, datatype, source, tag, comm, status);
}

CGM_THUNK_BY_REQUEST(MPI_Mrecv, MPI_Imrecv, f->status, f->buf, f->count, f->type, f->message);
CG_EXPORT int MPI_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message, MPI_Status *status)
{
    CGM_BY_TESTS(MPI_Mrecv, buf, count, type, message, status);
}

/* A posted request cancelled and completed, as the standard allows (MPI_Cancel, then a completion):
 * nothing of it stays posted to take a later message. */
static void cgm_cancel(MPI_Request *r)
{
    (void)CGM_LOCKED(MPI_Cancel, r);
    (void)cgm_complete(r, CGM_STATUS_IGNORE);
}

/* MPI_Sendrecv's arguments, or MPI_Sendrecv_c's: counts widened, each handle whole in a pointer. */
struct cgm_sendrecv {
    const void *sendbuf;
    long sendcount;
    void *sendtype;
    int dest, sendtag;
    void *recvbuf;
    long recvcount;
    void *recvtype;
    int source, recvtag;
    void *comm;
    void *status;
    int large; /* MPI_Sendrecv_c: made of MPI_Send_init_c, MPI_Irecv_c (and MPI_Recv_c) */
};

/* The send half's persistent request and the receive posted, then the send started: MPI_Send_init(_c),
 * MPI_Irecv(_c), MPI_Start. A call that fails leaves nothing: the receive cancelled, the send freed. */
static int cgm_sendrecv_post(const struct cgm_sendrecv *a, MPI_Request *send, MPI_Request *recv)
{
    int rc = a->large ? CGM_LOCKED(MPI_Send_init_c, a->sendbuf, a->sendcount, a->sendtype, a->dest, a->sendtag, a->comm,
                                   send)
                      : CGM_LOCKED(MPI_Send_init, a->sendbuf, (int)a->sendcount, (MPI_Datatype)a->sendtype, a->dest,
                                   a->sendtag, (MPI_Comm)a->comm, send);
    if (rc != MPI_SUCCESS) return rc;
    rc = a->large ? CGM_LOCKED(MPI_Irecv_c, a->recvbuf, a->recvcount, a->recvtype, a->source, a->recvtag, a->comm, recv)
                  : CGM_LOCKED(MPI_Irecv, a->recvbuf, (int)a->recvcount, (MPI_Datatype)a->recvtype, a->source,
                               a->recvtag, (MPI_Comm)a->comm, recv);
    int posted = rc == MPI_SUCCESS;
    if (posted) rc = CGM_LOCKED(MPI_Start, send);
    if (rc != MPI_SUCCESS) {
        if (posted) cgm_cancel(recv);
        (void)CGM_LOCKED(MPI_Request_free, send); /* the persistent send, never started */
    }
    return rc;
}

/* As Open MPI's MPI_Sendrecv: every argument is checked before anything is posted, so a call that
 * fails (a rank that does not exist, under MPI_ERRORS_RETURN) returns its error and leaves nothing
 * behind. A receive posted before a send that then failed would stay posted and take the program's
 * next message: its MPI_Recv of it would never return. So MPI_Send_init checks the send half (a
 * persistent request posts nothing), MPI_Irecv posts the receive (a rank whose send cannot leave yet
 * still takes its message), and only then MPI_Start starts the send; should it fail, the receive is
 * cancelled. The status is filled as the library's MPI_Sendrecv fills it: all but MPI_ERROR.
 *
 * MPI_Testall reads arrays of the library's requests and statuses: MPICH's are 4 and 20 bytes, Open
 * MPI's 8 and 24, the standard ABI's 8 and 32. Given Open MPI's MPI_Request[2], MPICH took the upper
 * half of the first request for the second and aborted ("The supplied request in array element 1 was
 * invalid (kind=15)"). */
static int cgm_sendrecv(const struct cgm_sendrecv *a)
{
    const struct cgm_abi *abi = cgm_abi;
    _Alignas(MPI_Request) unsigned char reqs[2 * CGM_REQUEST_MAX];
    _Alignas(MPI_Status) unsigned char st[2 * CGM_STATUS_MAX];
    MPI_Request *recv = (MPI_Request *)reqs, *send = (MPI_Request *)(reqs + abi->request_size);
    int received = 0, err[2];
    int rc = cgm_sendrecv_post(a, send, recv);
    if (rc != MPI_SUCCESS) return rc;
    /* MPI_Testall completes all or none, an error only once all are complete. */
    for (unsigned n = 0; rc == MPI_SUCCESS; n++) {
        int done = 0;
        rc = CGM_LOCKED(MPI_Testall, 2, recv, &done, (MPI_Status *)st);
        if (rc == abi->err_in_status) {
            memcpy(&err[0], st + abi->error_offset, sizeof err[0]);
            memcpy(&err[1], st + abi->status_size + abi->error_offset, sizeof err[1]);
            rc = err[0] != MPI_SUCCESS ? err[0] : err[1];
        }
        received = done || rc != MPI_SUCCESS;
        if (rc != MPI_SUCCESS || done) break;
        cgm_pause(n);
    }
    (void)CGM_LOCKED(MPI_Request_free, send); /* the persistent send, inactive now */
    if (received && a->status != (void *)CGM_STATUS_IGNORE && a->source == abi->proc_null) {
        /* What the library's MPI_Sendrecv says of no message (MPI_Testall's status of it was Open MPI's
         * MPI_ERROR 0 and MPICH's source 0, tag 0): its MPI_Recv from MPI_PROC_NULL, which never waits. */
        if (a->large)
            (void)CGM_LOCKED(MPI_Recv_c, a->recvbuf, a->recvcount, a->recvtype, a->source, a->recvtag, a->comm,
                             a->status);
        else
            (void)CGM_LOCKED(MPI_Recv, a->recvbuf, (int)a->recvcount, (MPI_Datatype)a->recvtype, a->source, a->recvtag,
                             (MPI_Comm)a->comm, a->status);
    } else if (received && a->status != (void *)CGM_STATUS_IGNORE) {
        unsigned char *status = a->status;
        memcpy(&err[0], status + abi->error_offset, sizeof err[0]);
        memcpy(status, st, abi->status_size);
        memcpy(status + abi->error_offset, &err[0], sizeof err[0]);
    }
    return rc;
}

static int cgm_th_MPI_Sendrecv(void *frame)
{
    struct cgl_fr_MPI_Sendrecv *f = frame;
    struct cgm_sendrecv a = {f->sendbuf,  f->sendcount, f->sendtype, f->dest, f->sendtag, f->recvbuf, f->recvcount,
                             f->recvtype, f->source,    f->recvtag,  f->comm, f->status,  0};
    f->cgl_ret = cgm_sendrecv(&a);
    return cgl_thunk_code(f->cgl_ret);
}
CG_EXPORT int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                           MPI_Status *status)
{
    CGM_BY_TESTS(MPI_Sendrecv, sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                 recvtag, comm, status);
}

static int cgm_th_MPI_Probe(void *frame)
{
    struct cgl_fr_MPI_Probe *f = frame;
    int rc;
    for (unsigned n = 0;; n++) {
        int done = 0;
        rc = CGM_LOCKED(MPI_Iprobe, f->source, f->tag, f->comm, &done, f->status);
        if (rc != MPI_SUCCESS || done) break;
        cgm_pause(n);
    }
    f->cgl_ret = rc;
    return cgl_thunk_code(rc);
}
CG_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    CGM_BY_TESTS(MPI_Probe, source, tag, comm, status);
}

static int cgm_th_MPI_Mprobe(void *frame)
{
    struct cgl_fr_MPI_Mprobe *f = frame;
    int rc;
    for (unsigned n = 0;; n++) {
        int done = 0;
        rc = CGM_LOCKED(MPI_Improbe, f->source, f->tag, f->comm, &done, f->message, f->status);
        if (rc != MPI_SUCCESS || done) break;
        cgm_pause(n);
    }
    f->cgl_ret = rc;
    return cgl_thunk_code(rc);
}
CG_EXPORT int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    CGM_BY_TESTS(MPI_Mprobe, source, tag, comm, message, status);
}

/* ---- waits: their test forms until they would have returned ---- */

static int cgm_th_MPI_Wait(void *frame)
{
    struct cgl_fr_MPI_Wait *f = frame;
    f->cgl_ret = cgm_complete(f->request, f->status);
    return cgl_thunk_code(f->cgl_ret);
}
CG_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status) { CGM_BY_TESTS(MPI_Wait, request, status); }

static int cgm_th_MPI_Waitall(void *frame)
{
    struct cgl_fr_MPI_Waitall *f = frame;
    int rc;
    for (unsigned n = 0;; n++) {
        int done = 0;
        rc = CGM_LOCKED(MPI_Testall, f->count, f->array_of_requests, &done, f->array_of_statuses);
        if (rc != MPI_SUCCESS || done) break;
        cgm_pause(n);
    }
    f->cgl_ret = rc;
    return cgl_thunk_code(rc);
}
CG_EXPORT int MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    CGM_BY_TESTS(MPI_Waitall, count, array_of_requests, array_of_statuses);
}

static int cgm_th_MPI_Waitany(void *frame)
{
    struct cgl_fr_MPI_Waitany *f = frame;
    int rc;
    for (unsigned n = 0;; n++) {
        int done = 0;
        rc = CGM_LOCKED(MPI_Testany, f->count, f->array_of_requests, f->index, &done, f->status);
        if (rc != MPI_SUCCESS || done) break;
        cgm_pause(n);
    }
    f->cgl_ret = rc;
    return cgl_thunk_code(rc);
}
CG_EXPORT int MPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    CGM_BY_TESTS(MPI_Waitany, count, array_of_requests, index, status);
}

/* Waitsome returns once a request completed, or with MPI_UNDEFINED when none is active, as Testsome
 * does: an outcount of 0 is the only answer to test again. */
static int cgm_th_MPI_Waitsome(void *frame)
{
    struct cgl_fr_MPI_Waitsome *f = frame;
    int rc;
    for (unsigned n = 0;; n++) {
        rc = CGM_LOCKED(MPI_Testsome, f->incount, f->array_of_requests, f->outcount, f->array_of_indices,
                        f->array_of_statuses);
        if (rc != MPI_SUCCESS || *f->outcount != 0) break;
        cgm_pause(n);
    }
    f->cgl_ret = rc;
    return cgl_thunk_code(rc);
}
CG_EXPORT int MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                           MPI_Status array_of_statuses[])
{
    CGM_BY_TESTS(MPI_Waitsome, incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

/* ---- collectives: their nonblocking forms (MPI 3) ---- */

CGM_THUNK_BY_REQUEST(MPI_Barrier, MPI_Ibarrier, CGM_STATUS_IGNORE, f->comm);
CG_EXPORT int MPI_Barrier(MPI_Comm comm) { CGM_BY_TESTS(MPI_Barrier, comm); }

CGM_THUNK_BY_REQUEST(MPI_Bcast, MPI_Ibcast, CGM_STATUS_IGNORE, f->buffer, f->count, f->datatype, f->root, f->comm);
CG_EXPORT int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Bcast, buffer, count, datatype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Reduce, MPI_Ireduce, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf, f->count, f->datatype, f->op,
                     f->root, f->comm);
CG_EXPORT int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                         MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Reduce, sendbuf, recvbuf, count, datatype, op, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Allreduce, MPI_Iallreduce, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf, f->count, f->datatype,
                     f->op, f->comm);
CG_EXPORT int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Allreduce, sendbuf, recvbuf, count, datatype, op, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Gather, MPI_Igather, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype, f->recvbuf,
                     f->recvcount, f->recvtype, f->root, f->comm);
CG_EXPORT int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Gather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Gatherv, MPI_Igatherv, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype, f->recvbuf,
                     f->recvcounts, f->displs, f->recvtype, f->root, f->comm);
CG_EXPORT int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Gatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Scatter, MPI_Iscatter, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype, f->recvbuf,
                     f->recvcount, f->recvtype, f->root, f->comm);
CG_EXPORT int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Scatter, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Scatterv, MPI_Iscatterv, CGM_STATUS_IGNORE, f->sendbuf, f->sendcounts, f->displs, f->sendtype,
                     f->recvbuf, f->recvcount, f->recvtype, f->root, f->comm);
CG_EXPORT int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Scatterv, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Allgather, MPI_Iallgather, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype,
                     f->recvbuf, f->recvcount, f->recvtype, f->comm);
CG_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                            MPI_Datatype recvtype, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Allgatherv, MPI_Iallgatherv, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype,
                     f->recvbuf, f->recvcounts, f->displs, f->recvtype, f->comm);
CG_EXPORT int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                             const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Alltoall, MPI_Ialltoall, CGM_STATUS_IGNORE, f->sendbuf, f->sendcount, f->sendtype, f->recvbuf,
                     f->recvcount, f->recvtype, f->comm);
CG_EXPORT int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Alltoallv, MPI_Ialltoallv, CGM_STATUS_IGNORE, f->sendbuf, f->sendcounts, f->sdispls,
                     f->sendtype, f->recvbuf, f->recvcounts, f->rdispls, f->recvtype, f->comm);
CG_EXPORT int MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
                            MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Alltoallw, MPI_Ialltoallw, CGM_STATUS_IGNORE, f->sendbuf, f->sendcounts, f->sdispls,
                     f->sendtypes, f->recvbuf, f->recvcounts, f->rdispls, f->recvtypes, f->comm);
CG_EXPORT int MPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[],
                            const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Alltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Reduce_scatter, MPI_Ireduce_scatter, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf, f->recvcounts,
                     f->datatype, f->op, f->comm);
CG_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
                                 MPI_Op op, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Reduce_scatter, sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf,
                     f->recvcount, f->datatype, f->op, f->comm);
CG_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype,
                                       MPI_Op op, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Reduce_scatter_block, sendbuf, recvbuf, recvcount, datatype, op, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Scan, MPI_Iscan, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf, f->count, f->datatype, f->op,
                     f->comm);
CG_EXPORT int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Scan, sendbuf, recvbuf, count, datatype, op, comm);
}

CGM_THUNK_BY_REQUEST(MPI_Exscan, MPI_Iexscan, CGM_STATUS_IGNORE, f->sendbuf, f->recvbuf, f->count, f->datatype, f->op,
                     f->comm);
CG_EXPORT int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    CGM_BY_TESTS(MPI_Exscan, sendbuf, recvbuf, count, datatype, op, comm);
}

/* The large-count forms of the calls above (MPI 4.0). */
#include "cg_mpi_large_count.c"

/* How the arguments a blocking call waits on are shown (wait_args). */
#include "cg_mpi_wait.c"
