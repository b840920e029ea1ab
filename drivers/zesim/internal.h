/*
 * Internal declarations of the callguard Level Zero simulator (libze_cgsim.so).
 *
 * Nothing declared here is exported: the library is built with -fvisibility=hidden and a version script,
 * so only the ze/zet/zes Get...ProcAddrTable getters are visible. Internal functions are named
 * cgsim_* (never ze*) so that a preloaded layer exporting ze* names can never interpose them.
 */
#ifndef CGSIM_INTERNAL_H
#define CGSIM_INTERNAL_H

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define CGSIM_MAX_DEVICES 64
/* maxSharedLocalMemory of every device; slm=N above it fails zeKernelCreate */
#define CGSIM_SHARED_LOCAL_MEMORY (64u * 1024u)
#define CGSIM_DRIVER_VERSION 0x00010002u /* 1.2; reported in ze_driver_properties_t::driverVersion */
#define CGSIM_VENDOR_ID 0x1de5u          /* not a real PCI vendor of GPUs; keeps the sim distinguishable */
#define CGSIM_DEVICE_NAME "callguard simulator"

/* ---- configuration (env.c) ---------------------------------------------------------------------------------- */

enum cgsim_race_mode { CGSIM_RACE_OFF, CGSIM_RACE_ABORT };

struct cgsim_config {
    uint32_t devices;          /* CGSIM_DEVICES, 1..64 */
    uint64_t compile_ms;       /* CGSIM_COMPILE_MS, 0..600000 */
    uint64_t kernel_us;        /* CGSIM_KERNEL_US, 0..60000000 */
    enum cgsim_race_mode race; /* CGSIM_COMPILER_RACE, off|abort */
    /* The driver identity reported (callguard's quirks file keys on it, docs/quirks.md). */
    bool neo_version;       /* CGSIM_DRIVER_VERSION=YY.WW.BUILD[.HOTFIX] given: reported as NEO does */
    uint32_t build, hotfix; /* its BUILD and HOTFIX */
    uint32_t vendor_id;     /* CGSIM_VENDOR_ID, default CGSIM_VENDOR_ID */
    char device_name[256];  /* CGSIM_DEVICE_NAME, default CGSIM_DEVICE_NAME */
};

/* Parses CGSIM_* once per process; returns false (after printing one line per problem to stderr) if any
 * variable is unknown or has a bad value. */
bool cgsim_config_load(struct cgsim_config *out);

/* ---- the compiler library (compiler.c) ------------------------------------------------------------------------ */

/* Opens libze_cgsim_compiler.so from the simulator's folder the first time it is called (every caller waits for
 * that one dlopen); returns NULL once it is open, else a line saying why it is not (for the build log). */
const char *cgsim_compiler_open(void);

/* ---- handles (handles.c) ------------------------------------------------------------------------------------ */

#define CGSIM_MAGIC 0x4347534du      /* "CGSM": every live object starts with it */
#define CGSIM_DEAD_MAGIC 0xdeadc651u /* written on destroy, so a stale pointer is recognisable in a debugger */

enum cgsim_kind {
    CGSIM_KIND_DRIVER = 1,
    CGSIM_KIND_DEVICE,
    CGSIM_KIND_CONTEXT,
    CGSIM_KIND_MODULE,
    CGSIM_KIND_BUILD_LOG,
    CGSIM_KIND_KERNEL,
    CGSIM_KIND_QUEUE,
    CGSIM_KIND_LIST,
    CGSIM_KIND_EVENT_POOL,
    CGSIM_KIND_EVENT,
    CGSIM_KIND_FENCE,
};

struct cgsim_object {
    uint32_t magic;
    uint32_t kind;
};

void cgsim_object_init(struct cgsim_object *obj, enum cgsim_kind kind);
/* Registers a live handle. Returns false when out of memory. */
bool cgsim_handle_register(struct cgsim_object *obj);
/* Removes the handle from the registry and marks it dead; the caller frees the memory afterwards. */
void cgsim_handle_unregister(struct cgsim_object *obj);
/* Returns the object if `handle` is a live handle of `kind`, NULL otherwise. The pointer is looked up in the
 * registry before it is dereferenced, so garbage and freed handles are refused without touching memory. */
void *cgsim_handle_lookup(const void *handle, enum cgsim_kind kind);

/* Checks a handle argument: NULL gives ZE_RESULT_ERROR_INVALID_NULL_HANDLE, an unknown, freed or wrong-kind
 * handle gives ZE_RESULT_ERROR_INVALID_ARGUMENT (Level Zero 1.4 has no dedicated "invalid handle" code). */
#define CGSIM_CHECK_HANDLE(var, type, handle, kind)                                                                    \
    type *var = NULL;                                                                                                  \
    do {                                                                                                               \
        if ((handle) == NULL) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;                                              \
        var = cgsim_handle_lookup((const void *)(handle), (kind));                                                     \
        if (var == NULL) return ZE_RESULT_ERROR_INVALID_ARGUMENT;                                                      \
    } while (0)

#define CGSIM_CHECK_PTR(ptr)                                                                                           \
    do {                                                                                                               \
        if ((ptr) == NULL) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                                                \
    } while (0)

/* ---- objects ------------------------------------------------------------------------------------------------ */

struct cgsim_driver;

struct cgsim_device {
    struct cgsim_object hdr;
    struct cgsim_driver *driver;
    uint32_t index;
};

struct cgsim_driver {
    struct cgsim_object hdr;
    struct cgsim_config config;
    uint32_t device_count;
    struct cgsim_device devices[CGSIM_MAX_DEVICES];
};

struct cgsim_context {
    struct cgsim_object hdr;
    struct cgsim_driver *driver;
};

/* A kernel as described by the module input: its name plus the figures zeKernelGetProperties reports. */
struct cgsim_kernel_info {
    char *name;
    uint32_t num_args;
    uint32_t spill_bytes;
    uint32_t private_bytes;
    uint32_t registers;
    uint32_t grf;       /* registers per thread the kernel cannot be built with fewer of (0: any GRF mode) */
    uint32_t slm_bytes; /* shared local memory it needs: zeKernelCreate fails above the device's */
};

struct cgsim_module {
    struct cgsim_object hdr;
    struct cgsim_context *context;
    struct cgsim_device *device;
    uint32_t kernel_count;
    struct cgsim_kernel_info *kernels;
    const char **kernel_names; /* kernel_count entries pointing into kernels[].name, for zeModuleGetKernelNames */
    atomic_uint live_kernels;  /* zeModuleDestroy refuses while kernels created from it are alive */
    uint64_t id;               /* goes into kernel UUIDs */
};

struct cgsim_build_log {
    struct cgsim_object hdr;
    char *text;
};

struct cgsim_kernel {
    struct cgsim_object hdr;
    struct cgsim_module *module;
    const struct cgsim_kernel_info *info;
    uint32_t group_size[3];
    uint64_t args_set; /* bit per argument index below 64, informational */
    ze_kernel_indirect_access_flags_t indirect_access;
};

struct cgsim_event_pool {
    struct cgsim_object hdr;
    struct cgsim_context *context;
    ze_event_pool_flags_t flags;
    uint32_t count;
    pthread_mutex_t lock;
    uint32_t live_events;
    bool *used; /* count entries: whether an event currently occupies the index */
};

struct cgsim_event {
    struct cgsim_object hdr;
    struct cgsim_event_pool *pool;
    uint32_t index;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    bool signaled;
    bool has_timestamp;
    uint64_t ts_start;
    uint64_t ts_end;
};

struct cgsim_queue;

struct cgsim_fence {
    struct cgsim_object hdr;
    struct cgsim_queue *queue;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool signaled;
};

enum cgsim_cmd_kind {
    CGSIM_CMD_LAUNCH,
    CGSIM_CMD_BARRIER,
    CGSIM_CMD_COPY,
    CGSIM_CMD_FILL,
    CGSIM_CMD_SIGNAL,
    CGSIM_CMD_WAIT,
    CGSIM_CMD_RESET,
};

/* One recorded command: wait for `waits`, do the operation, then signal `signal` (each part optional). */
struct cgsim_cmd {
    enum cgsim_cmd_kind kind;
    uint32_t num_waits;
    struct cgsim_event **waits;
    struct cgsim_event *signal;
    struct cgsim_event *target; /* CGSIM_CMD_RESET */
    void *dst;
    const void *src;
    size_t size;
    uint8_t pattern[16]; /* CGSIM_CMD_FILL; pattern_size is in `size_pattern` */
    size_t size_pattern;
    uint64_t duration_us; /* CGSIM_CMD_LAUNCH */
};

struct cgsim_cmd_vec {
    struct cgsim_cmd *items;
    size_t count;
    size_t capacity;
};

struct cgsim_batch {
    struct cgsim_batch *next;
    struct cgsim_cmd_vec cmds;
    struct cgsim_fence *fence;
};

struct cgsim_queue {
    struct cgsim_object hdr;
    struct cgsim_context *context;
    struct cgsim_device *device;
    bool synchronous;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC; signals both "work queued" and "work completed" */
    pthread_t worker;
    bool stop;
    struct cgsim_batch *head;
    struct cgsim_batch *tail;
    uint64_t submitted;
    uint64_t completed;
};

struct cgsim_list {
    struct cgsim_object hdr;
    struct cgsim_context *context;
    struct cgsim_device *device;
    bool immediate;
    /* Appending to one list from two threads at once breaks the spec's rule (the application
     * synchronizes); the simulator keeps its own memory sound anyway, so that callguard's thread
     * checks, whose tests make that mistake on purpose, can report it without a corrupt heap. */
    pthread_mutex_t lock; /* cmds and closed */
    bool closed;
    struct cgsim_cmd_vec cmds;
    struct cgsim_queue *queue; /* immediate lists only: a private queue that runs each append at once */
};

/* ---- shared helpers (sync.c) -------------------------------------------------------------------------------- */

void cgsim_cond_init_monotonic(pthread_cond_t *cond);
uint64_t cgsim_now_ns(void);
void cgsim_sleep_us(uint64_t us);
/* Converts a Level Zero timeout (0 = query, UINT64_MAX = forever) to an absolute CLOCK_MONOTONIC deadline. */
struct cgsim_deadline {
    bool forever;
    struct timespec at;
};
struct cgsim_deadline cgsim_deadline_after(uint64_t timeout_ns);
/* Waits on cond until the deadline; returns false once the deadline has passed. */
bool cgsim_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *lock, const struct cgsim_deadline *deadline);
char *cgsim_strdup(const char *s);

/* ---- cross-file internals ----------------------------------------------------------------------------------- */

struct cgsim_driver *cgsim_driver_get_initialized(void); /* NULL before a successful pfnInit */

void cgsim_event_signal(struct cgsim_event *event);
void cgsim_event_signal_kernel(struct cgsim_event *event, uint64_t start_ns, uint64_t end_ns);
void cgsim_event_reset(struct cgsim_event *event);
/* Waits until signaled or until *stop becomes true (checked every few milliseconds). */
void cgsim_event_wait_interruptible(struct cgsim_event *event, const bool *stop, pthread_mutex_t *stop_lock);
void cgsim_fence_signal(struct cgsim_fence *fence);

ze_result_t cgsim_queue_create_internal(struct cgsim_context *ctx, struct cgsim_device *dev, bool synchronous,
                                        struct cgsim_queue **out);
void cgsim_queue_destroy_internal(struct cgsim_queue *queue);
/* Takes ownership of *cmds (leaves it empty). */
ze_result_t cgsim_queue_submit(struct cgsim_queue *queue, struct cgsim_cmd_vec *cmds, struct cgsim_fence *fence);
ze_result_t cgsim_queue_wait_idle(struct cgsim_queue *queue, uint64_t timeout_ns);
void cgsim_cmd_vec_free(struct cgsim_cmd_vec *vec);

/* ---- table fillers: each file fills the entries it implements ------------------------------------------------ */

void cgsim_fill_driver_table(ze_driver_dditable_t *t);
void cgsim_fill_device_table(ze_device_dditable_t *t);
void cgsim_fill_context_table(ze_context_dditable_t *t);
void cgsim_fill_module_table(ze_module_dditable_t *t);
void cgsim_fill_build_log_table(ze_module_build_log_dditable_t *t);
void cgsim_fill_kernel_table(ze_kernel_dditable_t *t);
void cgsim_fill_queue_table(ze_command_queue_dditable_t *t);
void cgsim_fill_list_table(ze_command_list_dditable_t *t);
void cgsim_fill_event_pool_table(ze_event_pool_dditable_t *t);
void cgsim_fill_event_table(ze_event_dditable_t *t);
void cgsim_fill_fence_table(ze_fence_dditable_t *t);
void cgsim_fill_mem_table(ze_mem_dditable_t *t);

#endif
