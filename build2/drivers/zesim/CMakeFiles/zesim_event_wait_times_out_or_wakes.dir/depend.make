# Empty dependencies file for zesim_event_wait_times_out_or_wakes.
# This may be replaced when dependencies are built.
