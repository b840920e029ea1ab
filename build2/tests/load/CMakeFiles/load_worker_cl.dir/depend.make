# Empty dependencies file for load_worker_cl.
# This may be replaced when dependencies are built.
