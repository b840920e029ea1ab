file(REMOVE_RECURSE
  "../../../lib/libcallguard_cuda.pdb"
  "../../../lib/libcallguard_cuda.so"
  "CMakeFiles/callguard_cuda.dir/__/passthrough.S.o"
  "CMakeFiles/callguard_cuda.dir/cg_cuda.c.o"
  "CMakeFiles/callguard_cuda.dir/cg_cuda.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang ASM C)
  include(CMakeFiles/callguard_cuda.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
