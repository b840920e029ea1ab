file(REMOVE_RECURSE
  "../bin/cgtest_short"
  "../bin/cgtest_short.pdb"
  "CMakeFiles/cgtest_short.dir/cgtest.c.o"
  "CMakeFiles/cgtest_short.dir/cgtest.c.o.d"
  "CMakeFiles/cgtest_short.dir/test_short.c.o"
  "CMakeFiles/cgtest_short.dir/test_short.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest_short.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
