file(REMOVE_RECURSE
  "../../../lib/callguard/shims/libcuda.so.1"
  "../../../lib/callguard/shims/libcuda.so.1.pdb"
  "CMakeFiles/callguard_cuda_shim.dir/cg_cuda.c.o"
  "CMakeFiles/callguard_cuda_shim.dir/cg_cuda.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/callguard_cuda_shim.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
