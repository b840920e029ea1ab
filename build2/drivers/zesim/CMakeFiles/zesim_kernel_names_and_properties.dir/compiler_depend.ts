# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for zesim_kernel_names_and_properties.
