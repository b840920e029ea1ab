# Empty compiler generated dependencies file for cgloadtest.
# This may be replaced when dependencies are built.
