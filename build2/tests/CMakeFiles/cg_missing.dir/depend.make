# Empty dependencies file for cg_missing.
# This may be replaced when dependencies are built.
