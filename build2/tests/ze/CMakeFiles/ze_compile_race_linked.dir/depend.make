# Empty dependencies file for ze_compile_race_linked.
# This may be replaced when dependencies are built.
