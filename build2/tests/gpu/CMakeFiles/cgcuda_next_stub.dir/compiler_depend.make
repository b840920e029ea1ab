# Empty compiler generated dependencies file for cgcuda_next_stub.
# This may be replaced when dependencies are built.
