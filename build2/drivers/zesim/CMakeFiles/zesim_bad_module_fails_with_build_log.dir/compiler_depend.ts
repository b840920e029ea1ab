# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for zesim_bad_module_fails_with_build_log.
