# Empty compiler generated dependencies file for threads_ze.
# This may be replaced when dependencies are built.
