file(REMOVE_RECURSE
  "../../bin/zesim_reports_a_chosen_driver_identity"
  "../../bin/zesim_reports_a_chosen_driver_identity.pdb"
  "CMakeFiles/zesim_reports_a_chosen_driver_identity.dir/tests/driver_identity.c.o"
  "CMakeFiles/zesim_reports_a_chosen_driver_identity.dir/tests/driver_identity.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_reports_a_chosen_driver_identity.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
