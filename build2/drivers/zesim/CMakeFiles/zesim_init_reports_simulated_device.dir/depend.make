# Empty dependencies file for zesim_init_reports_simulated_device.
# This may be replaced when dependencies are built.
