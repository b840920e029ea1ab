# Empty dependencies file for callguard-cli.
# This may be replaced when dependencies are built.
