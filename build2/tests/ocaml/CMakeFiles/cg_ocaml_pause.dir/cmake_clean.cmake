file(REMOVE_RECURSE
  "CMakeFiles/cg_ocaml_pause"
  "ml/cg_ocaml_pause"
)

# Per-language clean rules from dependency scanning.
foreach(lang )
  include(CMakeFiles/cg_ocaml_pause.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
