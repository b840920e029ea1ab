file(REMOVE_RECURSE
  "../../bin/zesim_bad_cgsim_env_refused"
  "../../bin/zesim_bad_cgsim_env_refused.pdb"
  "CMakeFiles/zesim_bad_cgsim_env_refused.dir/tests/env_refused.c.o"
  "CMakeFiles/zesim_bad_cgsim_env_refused.dir/tests/env_refused.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_bad_cgsim_env_refused.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
