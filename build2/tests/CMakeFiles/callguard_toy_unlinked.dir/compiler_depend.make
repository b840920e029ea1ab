# Empty compiler generated dependencies file for callguard_toy_unlinked.
# This may be replaced when dependencies are built.
