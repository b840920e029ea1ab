
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/path/tests/cgtest.c" "tests/CMakeFiles/cgtest.dir/cgtest.c.o" "gcc" "tests/CMakeFiles/cgtest.dir/cgtest.c.o.d"
  "/work/wt/path/tests/test_core.c" "tests/CMakeFiles/cgtest.dir/test_core.c.o" "gcc" "tests/CMakeFiles/cgtest.dir/test_core.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/path/build2/CMakeFiles/callguard_toy.dir/DependInfo.cmake"
  "/work/wt/path/build2/CMakeFiles/callguard.dir/DependInfo.cmake"
  "/work/wt/path/build2/CMakeFiles/cgtoy.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
