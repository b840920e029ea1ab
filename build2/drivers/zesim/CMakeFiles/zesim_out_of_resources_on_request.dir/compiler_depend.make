# Empty compiler generated dependencies file for zesim_out_of_resources_on_request.
# This may be replaced when dependencies are built.
