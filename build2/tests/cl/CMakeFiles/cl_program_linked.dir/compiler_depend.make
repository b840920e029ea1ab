# Empty compiler generated dependencies file for cl_program_linked.
# This may be replaced when dependencies are built.
