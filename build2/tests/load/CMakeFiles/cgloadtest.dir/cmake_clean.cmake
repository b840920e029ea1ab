file(REMOVE_RECURSE
  "../../bin/cgloadtest"
  "../../bin/cgloadtest.pdb"
  "CMakeFiles/cgloadtest.dir/__/cgtest.c.o"
  "CMakeFiles/cgloadtest.dir/__/cgtest.c.o.d"
  "CMakeFiles/cgloadtest.dir/test_load.c.o"
  "CMakeFiles/cgloadtest.dir/test_load.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgloadtest.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
