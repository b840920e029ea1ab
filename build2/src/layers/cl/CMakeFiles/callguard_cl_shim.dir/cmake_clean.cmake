file(REMOVE_RECURSE
  "../../../lib/callguard/shims/libOpenCL.so.1"
  "../../../lib/callguard/shims/libOpenCL.so.1.pdb"
  "CMakeFiles/callguard_cl_shim.dir/cg_cl.c.o"
  "CMakeFiles/callguard_cl_shim.dir/cg_cl.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_cl_shim.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
