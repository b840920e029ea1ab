# Empty compiler generated dependencies file for cgzetest.
# This may be replaced when dependencies are built.
