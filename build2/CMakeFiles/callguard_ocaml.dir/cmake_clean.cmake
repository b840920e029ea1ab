file(REMOVE_RECURSE
  "CMakeFiles/callguard_ocaml.dir/src/adapters/ocaml.c.o"
  "CMakeFiles/callguard_ocaml.dir/src/adapters/ocaml.c.o.d"
  "libcallguard_ocaml.a"
  "libcallguard_ocaml.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_ocaml.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
