# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for zesim_bad_handles_get_spec_codes.
