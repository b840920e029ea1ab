file(REMOVE_RECURSE
  "../../lib/libcgcuda_inside_probe_next.pdb"
  "../../lib/libcgcuda_inside_probe_next.so"
  "CMakeFiles/cgcuda_inside_probe_next.dir/__/cuda/inside_probe.c.o"
  "CMakeFiles/cgcuda_inside_probe_next.dir/__/cuda/inside_probe.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgcuda_inside_probe_next.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
