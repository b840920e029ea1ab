# Empty dependencies file for ze_compile_race.
# This may be replaced when dependencies are built.
