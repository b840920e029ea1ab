/* cg_mpi_wait.c: how the MPI layer shows the arguments a blocking call waits on (wait_args in
 * apis/mpi.ini, the words mpi_rank, mpi_tag and mpi_comm; layer.h, cg_wait_format): a rank or a tag
 * as a number or by its constant's name (MPI_ANY_SOURCE, MPI_PROC_NULL, MPI_ANY_TAG), a communicator
 * by its name when it is a predefined one (MPI_COMM_WORLD with its size), else its handle. The
 * constants differ between the ABIs the layer serves (docs/mpi.md), so they are noted once the
 * library has initialized, on the initializing thread (cgm_note_names): before that, the values show
 * as plain numbers. Included at the end of cg_mpi_hand.c; not compiled alone. */

/* The process's library's constants, noted by cgm_note_names; `known` last, with release. */
static struct {
    uint64_t world, self, null; /* the predefined communicators' handles */
    uint64_t handle_mask;       /* the bits of a handle as it arrives: MPICH's int handles use 32 */
    int any_source, proc_null, any_tag, world_size;
} cgm_names;
static _Atomic int cgm_names_known;

/* After MPI_Init or MPI_Init_thread succeeded: Open MPI's communicators are its data symbols (found
 * by name: the layer never links them), MPICH's and the standard ABI's are constants. */
/* A data symbol of the library the real MPI_Comm_size is in: mpi4py loads its libmpi RTLD_LOCAL, so
 * Open MPI's communicators are not in the global scope then. */
static void *cgm_library_symbol(void *real, const char *name)
{
    void *sym = dlsym(RTLD_DEFAULT, name);
    Dl_info info;
    if (sym || !real || !dladdr(real, &info) || !info.dli_fname) return sym;
    void *lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) return NULL;
    sym = dlsym(lib, name);
    dlclose(lib); /* NOLOAD took a reference of a library that stays loaded */
    return sym;
}

static void cgm_note_names(void)
{
    if (atomic_load_explicit(&cgm_names_known, memory_order_relaxed)) return;
    int (*size)(uint64_t, int *) = cg_real_function(&cgl_layer, "MPI_Comm_size");
    /* Only the initialized library's own: a library that lacks MPI_Comm_size may have it found in
     * another MPI loaded beside it, never initialized. */
    void *init = cg_real_function(&cgl_layer, "MPI_Init_thread");
    Dl_info a, b;
    if (size && (!init || !dladdr((void *)size, &a) || !dladdr(init, &b) || a.dli_fbase != b.dli_fbase)) size = NULL;
    void *world = cgm_library_symbol((void *)size, "ompi_mpi_comm_world");
    int major = -1, minor = -1;
    int (*abi_version)(int *, int *) = cg_loaded_defines("PMPI_Abi_get_version", (const void *)cgm_note_names)
                                           ? cg_real_function(&cgl_layer, "MPI_Abi_get_version")
                                           : NULL;
    if (world) { /* Open MPI: mpi.h's values */
        cgm_names.world = (uint64_t)(uintptr_t)world;
        cgm_names.self = (uint64_t)(uintptr_t)cgm_library_symbol((void *)size, "ompi_mpi_comm_self");
        cgm_names.null = (uint64_t)(uintptr_t)cgm_library_symbol((void *)size, "ompi_mpi_comm_null");
        cgm_names.handle_mask = UINT64_MAX;
        cgm_names.any_source = MPI_ANY_SOURCE, cgm_names.proc_null = MPI_PROC_NULL, cgm_names.any_tag = MPI_ANY_TAG;
    } else if (abi_version && abi_version(&major, &minor) == CGM_SUCCESS && major >= 1) { /* mpi_abi.h's */
        cgm_names.world = 0x101, cgm_names.self = 0x102, cgm_names.null = 0x100;
        cgm_names.handle_mask = UINT64_MAX;
        cgm_names.any_source = -1, cgm_names.proc_null = CGM_STD_PROC_NULL, cgm_names.any_tag = -2;
    } else { /* MPICH's mpi.h */
        cgm_names.world = 0x44000000, cgm_names.self = 0x44000001, cgm_names.null = 0x04000000;
        cgm_names.handle_mask = UINT32_MAX;
        cgm_names.any_source = -2, cgm_names.proc_null = CGM_MPICH_PROC_NULL, cgm_names.any_tag = -1;
    }
    int n = 0;
    cgm_names.world_size = size && size(cgm_names.world, &n) == CGM_SUCCESS ? n : 0;
    atomic_store_explicit(&cgm_names_known, 1, memory_order_release);
}

static int cgl_wait_format(const char *as, uint64_t value, char *out, size_t size)
{
    if (!atomic_load_explicit(&cgm_names_known, memory_order_acquire)) return 0;
    int v = (int)(int64_t)value;
    if (strcmp(as, "mpi_rank") == 0) {
        const char *name = v == cgm_names.any_source  ? "MPI_ANY_SOURCE"
                           : v == cgm_names.proc_null ? "MPI_PROC_NULL"
                                                      : NULL;
        name ? snprintf(out, size, "%s", name) : snprintf(out, size, "%d", v);
        return 1;
    }
    if (strcmp(as, "mpi_tag") == 0) {
        v == cgm_names.any_tag ? snprintf(out, size, "MPI_ANY_TAG") : snprintf(out, size, "%d", v);
        return 1;
    }
    if (strcmp(as, "mpi_comm") != 0) return 0;
    uint64_t h = value & cgm_names.handle_mask;
    if (h == cgm_names.world && cgm_names.world_size > 0)
        snprintf(out, size, "MPI_COMM_WORLD (size %d)", cgm_names.world_size);
    else if (h == cgm_names.world)
        snprintf(out, size, "MPI_COMM_WORLD");
    else if (h == cgm_names.self)
        snprintf(out, size, "MPI_COMM_SELF");
    else if (h == cgm_names.null)
        snprintf(out, size, "MPI_COMM_NULL");
    else
        snprintf(out, size, "0x%llx", (unsigned long long)h);
    return 1;
}
