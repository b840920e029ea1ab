# Empty compiler generated dependencies file for load_worker_cuda.
# This may be replaced when dependencies are built.
