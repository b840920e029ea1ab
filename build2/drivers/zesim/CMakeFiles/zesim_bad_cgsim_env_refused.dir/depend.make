# Empty dependencies file for zesim_bad_cgsim_env_refused.
# This may be replaced when dependencies are built.
