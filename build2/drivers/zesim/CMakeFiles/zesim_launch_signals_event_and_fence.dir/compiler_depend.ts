# CMAKE generated file: DO NOT EDIT!
# Timestamp file for compiler generated dependencies management for zesim_launch_signals_event_and_fence.
