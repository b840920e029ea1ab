
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  "ASM"
  )
# The set of files for implicit dependencies of each language:
set(CMAKE_DEPENDS_CHECK_ASM
  "/work/wt/path/src/layers/passthrough.S" "/work/wt/path/build2/tests/cl/CMakeFiles/callguard_cl_nolib.dir/__/__/src/layers/passthrough.S.o"
  )
set(CMAKE_ASM_COMPILER_ID "GNU")

# Preprocessor definitions for this target.
set(CMAKE_TARGET_DEFINITIONS_ASM
  "CGL_PASSTHROUGH_LIST=\"/work/wt/path/src/layers/cl/cg_cl_passthrough.h\""
  "callguard_cl_nolib_EXPORTS"
  )

# The include file search paths:
set(CMAKE_ASM_TARGET_INCLUDE_PATH
  "/usr/include"
  "/work/wt/path/include"
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/path/src/layers/cl/cg_cl.c" "tests/cl/CMakeFiles/callguard_cl_nolib.dir/__/__/src/layers/cl/cg_cl.c.o" "gcc" "tests/cl/CMakeFiles/callguard_cl_nolib.dir/__/__/src/layers/cl/cg_cl.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/path/build2/CMakeFiles/callguard.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
