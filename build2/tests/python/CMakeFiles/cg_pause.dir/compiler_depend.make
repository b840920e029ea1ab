# Empty compiler generated dependencies file for cg_pause.
# This may be replaced when dependencies are built.
