file(REMOVE_RECURSE
  "../../bin/cuda_procaddr_probe"
  "../../bin/cuda_procaddr_probe.pdb"
  "CMakeFiles/cuda_procaddr_probe.dir/procaddr_probe.c.o"
  "CMakeFiles/cuda_procaddr_probe.dir/procaddr_probe.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cuda_procaddr_probe.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
