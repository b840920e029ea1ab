# Empty dependencies file for cgcuda_inside_probe_next.
# This may be replaced when dependencies are built.
