# Empty dependencies file for cgtoyrb.
# This may be replaced when dependencies are built.
