file(REMOVE_RECURSE
  "../bin/cgtest_trace"
  "../bin/cgtest_trace.pdb"
  "CMakeFiles/cgtest_trace.dir/cgtest.c.o"
  "CMakeFiles/cgtest_trace.dir/cgtest.c.o.d"
  "CMakeFiles/cgtest_trace.dir/test_trace.c.o"
  "CMakeFiles/cgtest_trace.dir/test_trace.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest_trace.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
