# Empty dependencies file for callguard_toy_shim.
# This may be replaced when dependencies are built.
