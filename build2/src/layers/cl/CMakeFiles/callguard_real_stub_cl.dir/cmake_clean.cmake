file(REMOVE_RECURSE
  "../../../callguard-shim-stubs/libcallguard-real-cl.so"
  "../../../callguard-shim-stubs/libcallguard-real-cl.so.pdb"
  "CMakeFiles/callguard_real_stub_cl.dir/__/__/__/callguard-shim-stubs/real_stub.c.o"
  "CMakeFiles/callguard_real_stub_cl.dir/__/__/__/callguard-shim-stubs/real_stub.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_real_stub_cl.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
