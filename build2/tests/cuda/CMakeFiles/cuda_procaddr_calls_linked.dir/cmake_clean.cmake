file(REMOVE_RECURSE
  "../../bin/cuda_procaddr_calls_linked"
  "../../bin/cuda_procaddr_calls_linked.pdb"
  "CMakeFiles/cuda_procaddr_calls_linked.dir/procaddr_calls.c.o"
  "CMakeFiles/cuda_procaddr_calls_linked.dir/procaddr_calls.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cuda_procaddr_calls_linked.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
