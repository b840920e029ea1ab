# Empty dependencies file for ze_passthrough_linked.
# This may be replaced when dependencies are built.
