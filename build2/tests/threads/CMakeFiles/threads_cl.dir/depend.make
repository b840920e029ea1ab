# Empty dependencies file for threads_cl.
# This may be replaced when dependencies are built.
