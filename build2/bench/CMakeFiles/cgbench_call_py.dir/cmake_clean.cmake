file(REMOVE_RECURSE
  "CMakeFiles/cgbench_call_py.dir/bench_call.c.o"
  "CMakeFiles/cgbench_call_py.dir/bench_call.c.o.d"
  "libcgbench_call_py.pdb"
  "libcgbench_call_py.so"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgbench_call_py.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
