file(REMOVE_RECURSE
  "../bin/cgtest"
  "../bin/cgtest.pdb"
  "CMakeFiles/cgtest.dir/cgtest.c.o"
  "CMakeFiles/cgtest.dir/cgtest.c.o.d"
  "CMakeFiles/cgtest.dir/test_core.c.o"
  "CMakeFiles/cgtest.dir/test_core.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgtest.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
