# Empty dependencies file for cgcuda_standin.
# This may be replaced when dependencies are built.
