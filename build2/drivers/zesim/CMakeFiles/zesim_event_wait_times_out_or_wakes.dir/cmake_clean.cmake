file(REMOVE_RECURSE
  "../../bin/zesim_event_wait_times_out_or_wakes"
  "../../bin/zesim_event_wait_times_out_or_wakes.pdb"
  "CMakeFiles/zesim_event_wait_times_out_or_wakes.dir/tests/event_timeout.c.o"
  "CMakeFiles/zesim_event_wait_times_out_or_wakes.dir/tests/event_timeout.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_event_wait_times_out_or_wakes.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
