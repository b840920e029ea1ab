# Empty dependencies file for callguard_real_stub_cl.
# This may be replaced when dependencies are built.
