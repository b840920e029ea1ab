# Empty dependencies file for cgtest_short.
# This may be replaced when dependencies are built.
