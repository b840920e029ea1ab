# Empty compiler generated dependencies file for cg_cl_dlopen.
# This may be replaced when dependencies are built.
