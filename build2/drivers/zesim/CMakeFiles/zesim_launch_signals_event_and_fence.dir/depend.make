# Empty dependencies file for zesim_launch_signals_event_and_fence.
# This may be replaced when dependencies are built.
