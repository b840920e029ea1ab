# Empty dependencies file for callguard-gen.
# This may be replaced when dependencies are built.
