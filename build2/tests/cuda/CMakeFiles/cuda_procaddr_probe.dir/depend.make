# Empty dependencies file for cuda_procaddr_probe.
# This may be replaced when dependencies are built.
