# Empty dependencies file for zesim_bad_module_fails_with_build_log.
# This may be replaced when dependencies are built.
