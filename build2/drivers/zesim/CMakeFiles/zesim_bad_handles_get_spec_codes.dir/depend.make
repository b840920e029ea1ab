# Empty dependencies file for zesim_bad_handles_get_spec_codes.
# This may be replaced when dependencies are built.
