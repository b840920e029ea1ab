# Empty compiler generated dependencies file for callguard_cuda_shim.
# This may be replaced when dependencies are built.
