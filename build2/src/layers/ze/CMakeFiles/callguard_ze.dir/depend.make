# Empty dependencies file for callguard_ze.
# This may be replaced when dependencies are built.
