file(REMOVE_RECURSE
  "../../bin/zesim_bad_handles_get_spec_codes"
  "../../bin/zesim_bad_handles_get_spec_codes.pdb"
  "CMakeFiles/zesim_bad_handles_get_spec_codes.dir/tests/bad_handles.c.o"
  "CMakeFiles/zesim_bad_handles_get_spec_codes.dir/tests/bad_handles.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_bad_handles_get_spec_codes.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
