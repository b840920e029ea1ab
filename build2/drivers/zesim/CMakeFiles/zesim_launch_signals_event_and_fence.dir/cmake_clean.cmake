file(REMOVE_RECURSE
  "../../bin/zesim_launch_signals_event_and_fence"
  "../../bin/zesim_launch_signals_event_and_fence.pdb"
  "CMakeFiles/zesim_launch_signals_event_and_fence.dir/tests/launch.c.o"
  "CMakeFiles/zesim_launch_signals_event_and_fence.dir/tests/launch.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_launch_signals_event_and_fence.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
