file(REMOVE_RECURSE
  "../../bin/ze_compile_race_linked"
  "../../bin/ze_compile_race_linked.pdb"
  "CMakeFiles/ze_compile_race_linked.dir/compile_race.c.o"
  "CMakeFiles/ze_compile_race_linked.dir/compile_race.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/ze_compile_race_linked.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
