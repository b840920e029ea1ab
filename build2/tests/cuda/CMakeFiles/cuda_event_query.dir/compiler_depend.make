# Empty compiler generated dependencies file for cuda_event_query.
# This may be replaced when dependencies are built.
