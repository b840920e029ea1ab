# Empty dependencies file for callguard_load.
# This may be replaced when dependencies are built.
