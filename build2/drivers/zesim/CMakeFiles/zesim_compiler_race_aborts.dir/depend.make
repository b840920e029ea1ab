# Empty dependencies file for zesim_compiler_race_aborts.
# This may be replaced when dependencies are built.
