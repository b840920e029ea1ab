file(REMOVE_RECURSE
  "../../bin/zesim_out_of_resources_on_request"
  "../../bin/zesim_out_of_resources_on_request.pdb"
  "CMakeFiles/zesim_out_of_resources_on_request.dir/tests/out_of_resources.c.o"
  "CMakeFiles/zesim_out_of_resources_on_request.dir/tests/out_of_resources.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_out_of_resources_on_request.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
