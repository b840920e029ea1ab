# Empty compiler generated dependencies file for cgcuda_standin_test.
# This may be replaced when dependencies are built.
