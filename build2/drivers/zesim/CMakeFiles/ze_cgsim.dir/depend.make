# Empty dependencies file for ze_cgsim.
# This may be replaced when dependencies are built.
