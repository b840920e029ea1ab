# Empty compiler generated dependencies file for cgtest_newer_loader.
# This may be replaced when dependencies are built.
