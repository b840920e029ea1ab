file(REMOVE_RECURSE
  "../../bin/cuda_compile_race"
  "../../bin/cuda_compile_race.pdb"
  "CMakeFiles/cuda_compile_race.dir/compile_race.c.o"
  "CMakeFiles/cuda_compile_race.dir/compile_race.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cuda_compile_race.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
