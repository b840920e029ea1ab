# Empty dependencies file for ze_compile_race_dlopen.
# This may be replaced when dependencies are built.
