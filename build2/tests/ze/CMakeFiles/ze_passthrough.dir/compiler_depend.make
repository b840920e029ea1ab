# Empty compiler generated dependencies file for ze_passthrough.
# This may be replaced when dependencies are built.
