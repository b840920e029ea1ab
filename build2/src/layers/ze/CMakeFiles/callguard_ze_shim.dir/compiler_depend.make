# Empty compiler generated dependencies file for callguard_ze_shim.
# This may be replaced when dependencies are built.
