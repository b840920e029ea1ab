file(REMOVE_RECURSE
  "../bin/bench_threads"
  "../bin/bench_threads.pdb"
  "CMakeFiles/bench_threads.dir/bench_threads.c.o"
  "CMakeFiles/bench_threads.dir/bench_threads.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_threads.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
