file(REMOVE_RECURSE
  "../../bin/zesim_init_reports_simulated_device"
  "../../bin/zesim_init_reports_simulated_device.pdb"
  "CMakeFiles/zesim_init_reports_simulated_device.dir/tests/init_device.c.o"
  "CMakeFiles/zesim_init_reports_simulated_device.dir/tests/init_device.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_init_reports_simulated_device.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
