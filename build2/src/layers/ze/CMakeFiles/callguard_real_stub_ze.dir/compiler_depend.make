# Empty compiler generated dependencies file for callguard_real_stub_ze.
# This may be replaced when dependencies are built.
