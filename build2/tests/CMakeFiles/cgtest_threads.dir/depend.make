# Empty dependencies file for cgtest_threads.
# This may be replaced when dependencies are built.
