file(REMOVE_RECURSE
  "../bin/cgtest_generated"
  "../bin/cgtest_generated.pdb"
  "CMakeFiles/cgtest_generated.dir/cgtest.c.o"
  "CMakeFiles/cgtest_generated.dir/cgtest.c.o.d"
  "CMakeFiles/cgtest_generated.dir/test_generated.c.o"
  "CMakeFiles/cgtest_generated.dir/test_generated.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest_generated.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
