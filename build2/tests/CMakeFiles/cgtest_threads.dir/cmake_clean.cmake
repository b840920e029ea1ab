file(REMOVE_RECURSE
  "../bin/cgtest_threads"
  "../bin/cgtest_threads.pdb"
  "CMakeFiles/cgtest_threads.dir/cgtest.c.o"
  "CMakeFiles/cgtest_threads.dir/cgtest.c.o.d"
  "CMakeFiles/cgtest_threads.dir/test_threads.c.o"
  "CMakeFiles/cgtest_threads.dir/test_threads.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest_threads.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
