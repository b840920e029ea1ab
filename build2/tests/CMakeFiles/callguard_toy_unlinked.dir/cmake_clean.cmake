file(REMOVE_RECURSE
  "../test-layers/libcallguard_toy_unlinked.pdb"
  "../test-layers/libcallguard_toy_unlinked.so"
  "CMakeFiles/callguard_toy_unlinked.dir/__/src/layers/toy/cg_toy.c.o"
  "CMakeFiles/callguard_toy_unlinked.dir/__/src/layers/toy/cg_toy.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_toy_unlinked.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
