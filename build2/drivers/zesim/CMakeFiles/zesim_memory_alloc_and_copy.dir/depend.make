# Empty dependencies file for zesim_memory_alloc_and_copy.
# This may be replaced when dependencies are built.
