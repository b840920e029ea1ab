# Empty compiler generated dependencies file for cgtoyrb.
# This may be replaced when dependencies are built.
