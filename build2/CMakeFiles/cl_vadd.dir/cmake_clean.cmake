file(REMOVE_RECURSE
  "CMakeFiles/cl_vadd.dir/examples/cl_vadd.c.o"
  "CMakeFiles/cl_vadd.dir/examples/cl_vadd.c.o.d"
  "bin/cl_vadd"
  "bin/cl_vadd.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cl_vadd.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
