file(REMOVE_RECURSE
  "../bin/cg_missing"
  "../bin/cg_missing.pdb"
  "CMakeFiles/cg_missing.dir/test_missing.c.o"
  "CMakeFiles/cg_missing.dir/test_missing.c.o.d"
)

# Per-language clean rules from dependency scanning.
foreach(lang C)
  include(CMakeFiles/cg_missing.dir/cmake_clean_${lang}.cmake OPTIONAL)
endforeach()
