file(REMOVE_RECURSE
  "../bin/cgtest_merge"
  "../bin/cgtest_merge.pdb"
  "CMakeFiles/cgtest_merge.dir/cgtest.c.o"
  "CMakeFiles/cgtest_merge.dir/cgtest.c.o.d"
  "CMakeFiles/cgtest_merge.dir/test_merge.c.o"
  "CMakeFiles/cgtest_merge.dir/test_merge.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest_merge.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
