# Empty dependencies file for cuda_procaddr_calls.
# This may be replaced when dependencies are built.
