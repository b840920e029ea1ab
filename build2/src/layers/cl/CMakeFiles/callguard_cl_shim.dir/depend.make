# Empty dependencies file for callguard_cl_shim.
# This may be replaced when dependencies are built.
