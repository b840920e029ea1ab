file(REMOVE_RECURSE
  "../bin/bench_load"
  "../bin/bench_load.pdb"
  "CMakeFiles/bench_load.dir/bench_load.c.o"
  "CMakeFiles/bench_load.dir/bench_load.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_load.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
