file(REMOVE_RECURSE
  "../../lib/libcgcuda_inside_probe.pdb"
  "../../lib/libcgcuda_inside_probe.so"
  "CMakeFiles/cgcuda_inside_probe.dir/inside_probe.c.o"
  "CMakeFiles/cgcuda_inside_probe.dir/inside_probe.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgcuda_inside_probe.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
