# Empty compiler generated dependencies file for cgtest_generated.
# This may be replaced when dependencies are built.
