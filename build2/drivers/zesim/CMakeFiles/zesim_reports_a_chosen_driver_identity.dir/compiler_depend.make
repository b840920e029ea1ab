# Empty compiler generated dependencies file for zesim_reports_a_chosen_driver_identity.
# This may be replaced when dependencies are built.
