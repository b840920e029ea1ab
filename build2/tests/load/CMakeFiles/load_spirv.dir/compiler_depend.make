# Empty custom commands generated dependencies file for load_spirv.
# This may be replaced when dependencies are built.
