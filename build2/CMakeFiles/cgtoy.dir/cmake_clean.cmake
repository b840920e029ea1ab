file(REMOVE_RECURSE
  "CMakeFiles/cgtoy.dir/tests/toy/toy.c.o"
  "CMakeFiles/cgtoy.dir/tests/toy/toy.c.o.d"
  "lib/libcgtoy.pdb"
  "lib/libcgtoy.so"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtoy.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
