# Empty dependencies file for cgbench_call_py.
# This may be replaced when dependencies are built.
