file(REMOVE_RECURSE
  "../../bin/cg_policy_check"
  "../../bin/cg_policy_check.pdb"
  "CMakeFiles/cg_policy_check.dir/policy_check.c.o"
  "CMakeFiles/cg_policy_check.dir/policy_check.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_policy_check.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
