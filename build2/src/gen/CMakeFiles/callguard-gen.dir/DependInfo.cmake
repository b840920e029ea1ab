
# Consider dependencies only in project.
set(CMAKE_DEPENDS_IN_PROJECT_ONLY OFF)

# The set of languages for which implicit dependencies are needed:
set(CMAKE_DEPENDS_LANGUAGES
  )

# The set of dependency files which are needed:
set(CMAKE_DEPENDS_DEPENDENCY_FILES
  "/work/wt/path/src/policy/policy_ini.c" "src/gen/CMakeFiles/callguard-gen.dir/__/policy/policy_ini.c.o" "gcc" "src/gen/CMakeFiles/callguard-gen.dir/__/policy/policy_ini.c.o.d"
  "/work/wt/path/src/gen/emit.c" "src/gen/CMakeFiles/callguard-gen.dir/emit.c.o" "gcc" "src/gen/CMakeFiles/callguard-gen.dir/emit.c.o.d"
  "/work/wt/path/src/gen/main.c" "src/gen/CMakeFiles/callguard-gen.dir/main.c.o" "gcc" "src/gen/CMakeFiles/callguard-gen.dir/main.c.o.d"
  "/work/wt/path/src/gen/parse.c" "src/gen/CMakeFiles/callguard-gen.dir/parse.c.o" "gcc" "src/gen/CMakeFiles/callguard-gen.dir/parse.c.o.d"
  "/work/wt/path/src/gen/policy.c" "src/gen/CMakeFiles/callguard-gen.dir/policy.c.o" "gcc" "src/gen/CMakeFiles/callguard-gen.dir/policy.c.o.d"
  "/work/wt/path/src/gen/util.c" "src/gen/CMakeFiles/callguard-gen.dir/util.c.o" "gcc" "src/gen/CMakeFiles/callguard-gen.dir/util.c.o.d"
  )

# Targets to which this target links.
set(CMAKE_TARGET_LINKED_INFO_FILES
  )

# Fortran module output directory.
set(CMAKE_Fortran_TARGET_MODULE_DIR "")
