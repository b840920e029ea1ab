
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  "ASM"
  )
# The set of files for implicit dependencies of each language:
set(CMAKE_DEPENDS_CHECK_ASM
  "/work/wt/path/src/layers/passthrough.S" "/work/wt/path/build2/src/layers/ze/CMakeFiles/callguard_ze.dir/__/passthrough.S.o"
  )
set(CMAKE_ASM_COMPILER_ID "GNU")

# Preprocessor definitions for this target.
set(CMAKE_TARGET_DEFINITIONS_ASM
  "CGL_PASSTHROUGH_LIST=\"/work/wt/path/src/layers/ze/cg_ze_passthrough.h\""
  "CG_LIBRARY_PATH_ZE=\"/usr/lib/x86_64-linux-gnu/libze_loader.so.1\""
  "callguard_ze_EXPORTS"
  )

# The include file search paths:
set(CMAKE_ASM_TARGET_INCLUDE_PATH
  "/usr/include"
  "/work/wt/path/include"
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/path/src/layers/ze/cg_ze.c" "src/layers/ze/CMakeFiles/callguard_ze.dir/cg_ze.c.o" "gcc" "src/layers/ze/CMakeFiles/callguard_ze.dir/cg_ze.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  "/work/wt/path/build2/CMakeFiles/callguard.dir/DependInfo.cmake"
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
