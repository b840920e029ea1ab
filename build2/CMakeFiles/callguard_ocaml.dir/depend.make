# Empty dependencies file for callguard_ocaml.
# This may be replaced when dependencies are built.
