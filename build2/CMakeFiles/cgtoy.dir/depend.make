# Empty dependencies file for cgtoy.
# This may be replaced when dependencies are built.
