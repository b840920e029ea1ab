# Empty dependencies file for callguard_cuda.
# This may be replaced when dependencies are built.
