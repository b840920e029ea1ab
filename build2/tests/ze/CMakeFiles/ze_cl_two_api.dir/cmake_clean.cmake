file(REMOVE_RECURSE
  "../../bin/ze_cl_two_api"
  "../../bin/ze_cl_two_api.pdb"
  "CMakeFiles/ze_cl_two_api.dir/two_api.c.o"
  "CMakeFiles/ze_cl_two_api.dir/two_api.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ze_cl_two_api.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
