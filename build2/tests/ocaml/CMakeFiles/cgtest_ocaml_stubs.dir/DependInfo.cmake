
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/path/tests/ocaml/stubs.c" "tests/ocaml/CMakeFiles/cgtest_ocaml_stubs.dir/stubs.c.o" "gcc" "tests/ocaml/CMakeFiles/cgtest_ocaml_stubs.dir/stubs.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/path/build2/CMakeFiles/callguard.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
