# Empty custom commands generated dependencies file for cg_ocaml_pause.
# This may be replaced when dependencies are built.
