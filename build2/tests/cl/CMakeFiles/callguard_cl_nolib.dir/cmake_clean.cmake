file(REMOVE_RECURSE
  "../../test-layers/libcallguard_cl_nolib.pdb"
  "../../test-layers/libcallguard_cl_nolib.so"
  "CMakeFiles/callguard_cl_nolib.dir/__/__/src/layers/cl/cg_cl.c.o"
  "CMakeFiles/callguard_cl_nolib.dir/__/__/src/layers/cl/cg_cl.c.o.d"
  "CMakeFiles/callguard_cl_nolib.dir/__/__/src/layers/passthrough.S.o"
)

# Per-language clean rules from dependency scanning.
foreach(lang ASM C)
  include(CMakeFiles/callguard_cl_nolib.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
