# Empty dependencies file for cg_secure_prog.
# This may be replaced when dependencies are built.
