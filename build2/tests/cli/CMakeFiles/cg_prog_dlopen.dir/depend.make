# Empty dependencies file for cg_prog_dlopen.
# This may be replaced when dependencies are built.
