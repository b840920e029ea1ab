# Empty dependencies file for cuda_procaddr_calls_linked.
# This may be replaced when dependencies are built.
