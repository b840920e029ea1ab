# Empty dependencies file for cgtest.
# This may be replaced when dependencies are built.
