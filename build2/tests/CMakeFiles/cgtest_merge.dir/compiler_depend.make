# Empty compiler generated dependencies file for cgtest_merge.
# This may be replaced when dependencies are built.
