# Empty compiler generated dependencies file for callguard_real_stub_toy.
# This may be replaced when dependencies are built.
