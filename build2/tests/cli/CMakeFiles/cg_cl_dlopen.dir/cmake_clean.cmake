file(REMOVE_RECURSE
  "../../bin/cg_cl_dlopen"
  "../../bin/cg_cl_dlopen.pdb"
  "CMakeFiles/cg_cl_dlopen.dir/cl_dlopen.c.o"
  "CMakeFiles/cg_cl_dlopen.dir/cl_dlopen.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_cl_dlopen.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
