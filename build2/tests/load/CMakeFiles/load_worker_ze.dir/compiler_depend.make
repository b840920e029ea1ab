# Empty compiler generated dependencies file for load_worker_ze.
# This may be replaced when dependencies are built.
