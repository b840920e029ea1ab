file(REMOVE_RECURSE
  "../../bin/zesim_compiler_race_aborts"
  "../../bin/zesim_compiler_race_aborts.pdb"
  "CMakeFiles/zesim_compiler_race_aborts.dir/tests/race_abort.c.o"
  "CMakeFiles/zesim_compiler_race_aborts.dir/tests/race_abort.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/zesim_compiler_race_aborts.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
