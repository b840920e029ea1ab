# Empty compiler generated dependencies file for ze_event_poll.
# This may be replaced when dependencies are built.
