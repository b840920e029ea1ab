# Empty compiler generated dependencies file for ze_pause_linked.
# This may be replaced when dependencies are built.
