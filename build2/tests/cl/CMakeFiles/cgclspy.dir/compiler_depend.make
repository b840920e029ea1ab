# Empty compiler generated dependencies file for cgclspy.
# This may be replaced when dependencies are built.
