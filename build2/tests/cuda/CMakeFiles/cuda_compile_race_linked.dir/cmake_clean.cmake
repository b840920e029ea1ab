file(REMOVE_RECURSE
  "../../bin/cuda_compile_race_linked"
  "../../bin/cuda_compile_race_linked.pdb"
  "CMakeFiles/cuda_compile_race_linked.dir/compile_race.c.o"
  "CMakeFiles/cuda_compile_race_linked.dir/compile_race.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cuda_compile_race_linked.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
