file(REMOVE_RECURSE
  "CMakeFiles/toy_race.dir/examples/toy_race.c.o"
  "CMakeFiles/toy_race.dir/examples/toy_race.c.o.d"
  "bin/toy_race"
  "bin/toy_race.pdb"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/toy_race.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
