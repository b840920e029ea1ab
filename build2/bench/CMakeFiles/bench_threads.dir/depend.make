# Empty dependencies file for bench_threads.
# This may be replaced when dependencies are built.
