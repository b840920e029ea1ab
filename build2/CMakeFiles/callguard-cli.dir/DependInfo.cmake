
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/path/src/cli/layers.c" "CMakeFiles/callguard-cli.dir/src/cli/layers.c.o" "gcc" "CMakeFiles/callguard-cli.dir/src/cli/layers.c.o.d"
  "/work/wt/path/src/cli/list.c" "CMakeFiles/callguard-cli.dir/src/cli/list.c.o" "gcc" "CMakeFiles/callguard-cli.dir/src/cli/list.c.o.d"
  "/work/wt/path/src/cli/main.c" "CMakeFiles/callguard-cli.dir/src/cli/main.c.o" "gcc" "CMakeFiles/callguard-cli.dir/src/cli/main.c.o.d"
  "/work/wt/path/src/cli/real_library.c" "CMakeFiles/callguard-cli.dir/src/cli/real_library.c.o" "gcc" "CMakeFiles/callguard-cli.dir/src/cli/real_library.c.o.d"
  "/work/wt/path/src/cli/run.c" "CMakeFiles/callguard-cli.dir/src/cli/run.c.o" "gcc" "CMakeFiles/callguard-cli.dir/src/cli/run.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/path/build2/CMakeFiles/callguard.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
