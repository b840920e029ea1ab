# Empty dependencies file for bench_call.
# This may be replaced when dependencies are built.
