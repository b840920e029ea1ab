file(REMOVE_RECURSE
  "CMakeFiles/callguard_toy.dir/src/layers/toy/cg_toy.c.o"
  "CMakeFiles/callguard_toy.dir/src/layers/toy/cg_toy.c.o.d"
  "test-layers/libcallguard_toy.pdb"
  "test-layers/libcallguard_toy.so"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_toy.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
