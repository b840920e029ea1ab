# Empty compiler generated dependencies file for callguard_cl.
# This may be replaced when dependencies are built.
