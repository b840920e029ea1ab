file(REMOVE_RECURSE
  "../../../callguard-shim-stubs/libcallguard-real-cuda.so"
  "../../../callguard-shim-stubs/libcallguard-real-cuda.so.pdb"
  "CMakeFiles/callguard_real_stub_cuda.dir/__/__/__/callguard-shim-stubs/real_stub.c.o"
  "CMakeFiles/callguard_real_stub_cuda.dir/__/__/__/callguard-shim-stubs/real_stub.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_real_stub_cuda.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
