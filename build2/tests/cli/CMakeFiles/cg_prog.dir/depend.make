# Empty dependencies file for cg_prog.
# This may be replaced when dependencies are built.
