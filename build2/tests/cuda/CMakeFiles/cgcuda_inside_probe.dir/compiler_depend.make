# Empty compiler generated dependencies file for cgcuda_inside_probe.
# This may be replaced when dependencies are built.
