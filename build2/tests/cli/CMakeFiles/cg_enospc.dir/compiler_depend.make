# Empty compiler generated dependencies file for cg_enospc.
# This may be replaced when dependencies are built.
