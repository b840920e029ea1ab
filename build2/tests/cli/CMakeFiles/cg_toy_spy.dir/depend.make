# Empty dependencies file for cg_toy_spy.
# This may be replaced when dependencies are built.
