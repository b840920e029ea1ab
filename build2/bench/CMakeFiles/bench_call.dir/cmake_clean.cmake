file(REMOVE_RECURSE
  "../bin/bench_call"
  "../bin/bench_call.pdb"
  "CMakeFiles/bench_call.dir/bench_call.c.o"
  "CMakeFiles/bench_call.dir/bench_call.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_call.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
