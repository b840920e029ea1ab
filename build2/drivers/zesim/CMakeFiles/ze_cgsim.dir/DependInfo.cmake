
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/path/drivers/zesim/device.c" "drivers/zesim/CMakeFiles/ze_cgsim.dir/device.c.o" "gcc" "drivers/zesim/CMakeFiles/ze_cgsim.dir/device.c.o.d"
  "/work/wt/path/drivers/zesim/driver.c" "drivers/zesim/CMakeFiles/ze_cgsim.dir/driver.c.o" "gcc" "drivers/zesim/CMakeFiles/ze_cgsim.dir/driver.c.o.d"
  "/work/wt/path/drivers/zesim/env.c" "drivers/zesim/CMakeFiles/ze_cgsim.dir/env.c.o" "gcc" "drivers/zesim/CMakeFiles/ze_cgsim.dir/env.c.o.d"
  "/work/wt/path/drivers/zesim/event.c" "drivers/zesim/CMakeFiles/ze_cgsim.dir/event.c.o" "gcc" "drivers/zesim/CMakeFiles/ze_cgsim.dir/event.c.o.d"
  "/work/wt/path/drivers/zesim/handles.c" "drivers/zesim/CMakeFiles/ze_cgsim.dir/handles.c.o" "gcc" "drivers/zesim/CMakeFiles/ze_cgsim.dir/handles.c.o.d"
  "/work/wt/path/drivers/zesim/memory.c" "drivers/zesim/CMakeFiles/ze_cgsim.dir/memory.c.o" "gcc" "drivers/zesim/CMakeFiles/ze_cgsim.dir/memory.c.o.d"
  "/work/wt/path/drivers/zesim/module.c" "drivers/zesim/CMakeFiles/ze_cgsim.dir/module.c.o" "gcc" "drivers/zesim/CMakeFiles/ze_cgsim.dir/module.c.o.d"
  "/work/wt/path/drivers/zesim/queue.c" "drivers/zesim/CMakeFiles/ze_cgsim.dir/queue.c.o" "gcc" "drivers/zesim/CMakeFiles/ze_cgsim.dir/queue.c.o.d"
  "/work/wt/path/drivers/zesim/sync.c" "drivers/zesim/CMakeFiles/ze_cgsim.dir/sync.c.o" "gcc" "drivers/zesim/CMakeFiles/ze_cgsim.dir/sync.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
