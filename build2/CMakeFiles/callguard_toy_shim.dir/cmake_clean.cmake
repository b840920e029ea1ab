file(REMOVE_RECURSE
  "CMakeFiles/callguard_toy_shim.dir/src/layers/toy/cg_toy.c.o"
  "CMakeFiles/callguard_toy_shim.dir/src/layers/toy/cg_toy.c.o.d"
  "test-layers/callguard/shims/libcgtoy.so"
  "test-layers/callguard/shims/libcgtoy.so.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_toy_shim.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
