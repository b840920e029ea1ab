file(REMOVE_RECURSE
  "../bin/cgtest_late"
  "../bin/cgtest_late.pdb"
  "CMakeFiles/cgtest_late.dir/cgtest.c.o"
  "CMakeFiles/cgtest_late.dir/cgtest.c.o.d"
  "CMakeFiles/cgtest_late.dir/test_late.c.o"
  "CMakeFiles/cgtest_late.dir/test_late.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest_late.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
