file(REMOVE_RECURSE
  "../../bin/cgcuda_standin_test"
  "../../bin/cgcuda_standin_test.pdb"
  "CMakeFiles/cgcuda_standin_test.dir/__/cgtest.c.o"
  "CMakeFiles/cgcuda_standin_test.dir/__/cgtest.c.o.d"
  "CMakeFiles/cgcuda_standin_test.dir/test_standin.c.o"
  "CMakeFiles/cgcuda_standin_test.dir/test_standin.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgcuda_standin_test.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
