# Empty dependencies file for cl_program_nolib.
# This may be replaced when dependencies are built.
