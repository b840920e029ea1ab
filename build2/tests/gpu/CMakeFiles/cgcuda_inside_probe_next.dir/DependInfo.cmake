
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/path/tests/cuda/inside_probe.c" "tests/gpu/CMakeFiles/cgcuda_inside_probe_next.dir/__/cuda/inside_probe.c.o" "gcc" "tests/gpu/CMakeFiles/cgcuda_inside_probe_next.dir/__/cuda/inside_probe.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
