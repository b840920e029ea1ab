file(REMOVE_RECURSE
  "../../bin/zesim_native_binary_loads_fast"
  "../../bin/zesim_native_binary_loads_fast.pdb"
  "CMakeFiles/zesim_native_binary_loads_fast.dir/tests/native_roundtrip.c.o"
  "CMakeFiles/zesim_native_binary_loads_fast.dir/tests/native_roundtrip.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_native_binary_loads_fast.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
