# Empty dependencies file for callguard_toy.
# This may be replaced when dependencies are built.
