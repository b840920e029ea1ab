# Empty dependencies file for zesim_compile_takes_compile_ms.
# This may be replaced when dependencies are built.
