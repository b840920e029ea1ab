file(REMOVE_RECURSE
  "../bin/bench_call_py_embed"
  "../bin/bench_call_py_embed.pdb"
  "CMakeFiles/bench_call_py_embed.dir/bench_call.c.o"
  "CMakeFiles/bench_call_py_embed.dir/bench_call.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/bench_call_py_embed.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
