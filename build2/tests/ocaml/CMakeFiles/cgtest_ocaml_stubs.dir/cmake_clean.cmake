file(REMOVE_RECURSE
  "CMakeFiles/cgtest_ocaml_stubs.dir/stubs.c.o"
  "CMakeFiles/cgtest_ocaml_stubs.dir/stubs.c.o.d"
  "libcgtest_ocaml_stubs.a"
  "libcgtest_ocaml_stubs.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest_ocaml_stubs.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
