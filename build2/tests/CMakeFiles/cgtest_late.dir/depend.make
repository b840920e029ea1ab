# Empty dependencies file for cgtest_late.
# This may be replaced when dependencies are built.
