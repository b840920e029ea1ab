# Empty compiler generated dependencies file for callguard_cl_nolib.
# This may be replaced when dependencies are built.
