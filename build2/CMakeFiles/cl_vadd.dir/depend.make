# Empty dependencies file for cl_vadd.
# This may be replaced when dependencies are built.
