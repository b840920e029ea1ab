file(REMOVE_RECURSE
  "../../bin/cgzetest"
  "../../bin/cgzetest.pdb"
  "CMakeFiles/cgzetest.dir/__/cgtest.c.o"
  "CMakeFiles/cgzetest.dir/__/cgtest.c.o.d"
  "CMakeFiles/cgzetest.dir/test_ze.c.o"
  "CMakeFiles/cgzetest.dir/test_ze.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cgzetest.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
