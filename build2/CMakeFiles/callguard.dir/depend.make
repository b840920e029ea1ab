# Empty dependencies file for callguard.
# This may be replaced when dependencies are built.
