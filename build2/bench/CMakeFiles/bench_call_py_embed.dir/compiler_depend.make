# Empty compiler generated dependencies file for bench_call_py_embed.
# This may be replaced when dependencies are built.
