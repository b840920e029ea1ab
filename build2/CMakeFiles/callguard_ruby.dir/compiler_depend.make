# Empty compiler generated dependencies file for callguard_ruby.
# This may be replaced when dependencies are built.
