# Empty dependencies file for zesim_kernel_names_and_properties.
# This may be replaced when dependencies are built.
