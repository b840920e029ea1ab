# Empty compiler generated dependencies file for cuda_compile_race.
# This may be replaced when dependencies are built.
