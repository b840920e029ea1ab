# Empty compiler generated dependencies file for cg_short_py.
# This may be replaced when dependencies are built.
