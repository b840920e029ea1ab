# Empty compiler generated dependencies file for zesim_native_binary_loads_fast.
# This may be replaced when dependencies are built.
