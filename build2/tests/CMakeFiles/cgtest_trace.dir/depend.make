# Empty dependencies file for cgtest_trace.
# This may be replaced when dependencies are built.
