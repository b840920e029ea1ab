file(REMOVE_RECURSE
  "CMakeFiles/cgcuda_standin.dir/standin.c.o"
  "CMakeFiles/cgcuda_standin.dir/standin.c.o.d"
  "standin/libcuda.so.1"
  "standin/libcuda.so.1.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgcuda_standin.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
