file(REMOVE_RECURSE
  "../../bin/ze_compile_race"
  "../../bin/ze_compile_race.pdb"
  "CMakeFiles/ze_compile_race.dir/compile_race.c.o"
  "CMakeFiles/ze_compile_race.dir/compile_race.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ze_compile_race.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
