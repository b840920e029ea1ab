file(REMOVE_RECURSE
  "CMakeFiles/callguard_real_stub_toy.dir/callguard-shim-stubs/real_stub.c.o"
  "CMakeFiles/callguard_real_stub_toy.dir/callguard-shim-stubs/real_stub.c.o.d"
  "callguard-shim-stubs/libcallguard-real-toy.so"
  "callguard-shim-stubs/libcallguard-real-toy.so.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_real_stub_toy.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
