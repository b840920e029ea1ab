# Empty compiler generated dependencies file for cg_igc_probe.
# This may be replaced when dependencies are built.
