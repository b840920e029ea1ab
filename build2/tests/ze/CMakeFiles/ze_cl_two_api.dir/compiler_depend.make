# Empty compiler generated dependencies file for ze_cl_two_api.
# This may be replaced when dependencies are built.
