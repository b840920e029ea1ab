# Empty compiler generated dependencies file for callguard_real_stub_cuda.
# This may be replaced when dependencies are built.
