# Empty dependencies file for cl_program_plain.
# This may be replaced when dependencies are built.
