file(REMOVE_RECURSE
  "../../bin/zesim_bad_module_fails_with_build_log"
  "../../bin/zesim_bad_module_fails_with_build_log.pdb"
  "CMakeFiles/zesim_bad_module_fails_with_build_log.dir/tests/bad_module.c.o"
  "CMakeFiles/zesim_bad_module_fails_with_build_log.dir/tests/bad_module.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_bad_module_fails_with_build_log.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
