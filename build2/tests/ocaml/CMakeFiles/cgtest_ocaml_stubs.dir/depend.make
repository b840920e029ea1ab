# Empty dependencies file for cgtest_ocaml_stubs.
# This may be replaced when dependencies are built.
