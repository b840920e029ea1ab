file(REMOVE_RECURSE
  "../../lib/libze_cgsim.pdb"
  "../../lib/libze_cgsim.so"
  "CMakeFiles/ze_cgsim.dir/device.c.o"
  "CMakeFiles/ze_cgsim.dir/device.c.o.d"
  "CMakeFiles/ze_cgsim.dir/driver.c.o"
  "CMakeFiles/ze_cgsim.dir/driver.c.o.d"
  "CMakeFiles/ze_cgsim.dir/env.c.o"
  "CMakeFiles/ze_cgsim.dir/env.c.o.d"
  "CMakeFiles/ze_cgsim.dir/event.c.o"
  "CMakeFiles/ze_cgsim.dir/event.c.o.d"
  "CMakeFiles/ze_cgsim.dir/handles.c.o"
  "CMakeFiles/ze_cgsim.dir/handles.c.o.d"
  "CMakeFiles/ze_cgsim.dir/memory.c.o"
  "CMakeFiles/ze_cgsim.dir/memory.c.o.d"
  "CMakeFiles/ze_cgsim.dir/module.c.o"
  "CMakeFiles/ze_cgsim.dir/module.c.o.d"
  "CMakeFiles/ze_cgsim.dir/queue.c.o"
  "CMakeFiles/ze_cgsim.dir/queue.c.o.d"
  "CMakeFiles/ze_cgsim.dir/sync.c.o"
  "CMakeFiles/ze_cgsim.dir/sync.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ze_cgsim.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
